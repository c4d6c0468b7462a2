/**
 * One call of a process-tier pool, on the host: answers exactly once, with its deadline on the
 * host's clock. The deadline is armed when the package's process says the call was handed to a
 * worker; a process that never says so (a broken or hostile one) still can't hold the call, since a
 * call sent to it must start within an allowance or it answers as timed out. Progress is delivered
 * only while the call waits for its answer, at most {@link MAX_PROGRESS_MESSAGES} of it.
 */

import { type CallTask, MAX_PROGRESS_MESSAGES } from '../boundary/protocol.js';
import { failure, type PoolReply } from '../calls/pool-call.js';
import type { JsonValue } from '../tool-module.js';

/**
 * How long after it was sent a call may wait to start, beyond its own timeout: a worker starting in
 * the process (tens of ms, seconds on a loaded machine). The host sends a process no more calls than
 * it has threads, so a call sent never waits behind another.
 */
export const START_ALLOWANCE_MS = 30_000;

export class ProcessCall {
  readonly task: CallTask;
  readonly #onProgress: ((data: JsonValue) => void) | undefined;
  readonly #resolve: (reply: PoolReply) => void;
  readonly #onAnswered: () => void;
  #answered = false;
  #started = false;
  #timer: NodeJS.Timeout | undefined;
  #progressReceived = 0;

  constructor(options: {
    task: CallTask;
    onProgress: ((data: JsonValue) => void) | undefined;
    resolve: (reply: PoolReply) => void;
    onAnswered: () => void;
  }) {
    this.task = options.task;
    this.#onProgress = options.onProgress;
    this.#resolve = options.resolve;
    this.#onAnswered = options.onAnswered;
  }

  get answered(): boolean {
    return this.#answered;
  }

  answer(reply: PoolReply): void {
    if (this.#answered) return;
    this.#answered = true;
    clearTimeout(this.#timer);
    this.#onAnswered();
    this.#resolve(reply);
  }

  /** Sent to a process: it has the allowance to start the call; `onStuck` if it doesn't. */
  sent(onStuck: () => void): void {
    if (this.#answered) return;
    this.#timer = setTimeout(() => {
      this.#timeOut();
      onStuck();
    }, this.task.timeoutMs + START_ALLOWANCE_MS);
  }

  /** The process handed the call to a worker: the timeout counts from now, once. */
  started(): void {
    if (this.#answered || this.#started) return;
    this.#started = true;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#timeOut(), this.task.timeoutMs);
  }

  /** A progress message for this call (`undefined`: one whose data was not plain, dropped). */
  progress(data: JsonValue | undefined): void {
    this.#progressReceived += 1;
    if (this.#answered || data === undefined || this.#progressReceived > MAX_PROGRESS_MESSAGES) return;
    try {
      this.#onProgress?.(data);
    } catch {
      // A 'progress' listener that throws loses that message, never the call or its process.
    }
  }

  #timeOut(): void {
    this.answer(failure('TOOL_TIMEOUT', `tool timed out after ${this.task.timeoutMs} ms`));
  }
}
