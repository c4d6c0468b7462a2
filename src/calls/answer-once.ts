/**
 * What every tier's call has in common on the host: it answers exactly once (whatever arrives later
 * is dropped), its deadline lives on the host's clock, and it delivers progress only while it waits
 * for its answer, at most {@link MAX_PROGRESS_MESSAGES} messages. A `progress` listener that throws
 * loses that message, never the call: the same in every tier.
 */
import type { ToolErrorCode } from '../boundary/errors.js';
import type { CallReply } from '../boundary/protocol.js';
import {
  type CallTask,
  type CapturedLog,
  MAX_PROGRESS_MESSAGES,
  type WorkerError,
} from '../boundary/protocol.js';
import type { JsonValue } from '../tool-module.js';

/** What a call answers, from its worker's reply or from what the host saw. */
export type PoolReply =
  | CallReply
  | {
      ok: false;
      error: WorkerError;
      logs: CapturedLog[];
      droppedLogChars: number;
    };

export function failure(
  code: ToolErrorCode,
  message: string,
  logs: CapturedLog[] = [],
  stack?: string,
): PoolReply {
  return {
    ok: false,
    error: stack === undefined ? { code, message } : { code, message, stack },
    logs,
    droppedLogChars: 0,
  };
}

export interface CallWaiters {
  task: CallTask;
  onProgress: ((data: JsonValue) => void) | undefined;
  resolve: (reply: PoolReply) => void;
  onAnswered: () => void;
}

export abstract class AnswerOnce {
  readonly task: CallTask;
  readonly #onProgress: ((data: JsonValue) => void) | undefined;
  readonly #resolve: (reply: PoolReply) => void;
  readonly #onAnswered: () => void;
  #answered = false;
  #deadline: NodeJS.Timeout | undefined;
  #progressReceived = 0;

  constructor(waiters: CallWaiters) {
    this.task = waiters.task;
    this.#onProgress = waiters.onProgress;
    this.#resolve = waiters.resolve;
    this.#onAnswered = waiters.onAnswered;
  }

  get answered(): boolean {
    return this.#answered;
  }

  answer(reply: PoolReply): void {
    if (this.#answered) return;
    this.#answered = true;
    clearTimeout(this.#deadline);
    this.#onAnswered();
    this.#resolve(reply);
  }

  /** Progress messages that reached the host for this call, delivered or not. */
  protected get progressReceived(): number {
    return this.#progressReceived;
  }

  /** Counts one progress message and delivers its data (`undefined`: not plain data, dropped). */
  protected progress(data: JsonValue | undefined): void {
    this.#progressReceived += 1;
    if (this.#answered || data === undefined || this.#progressReceived > MAX_PROGRESS_MESSAGES) return;
    try {
      this.#onProgress?.(data);
    } catch {
      // A 'progress' listener that throws loses that message, never the call or its worker.
    }
  }

  /** (Re)arms the deadline on the host's clock; `fire` runs when it passes unanswered. */
  protected armDeadline(ms: number, fire: () => void): void {
    clearTimeout(this.#deadline);
    this.#deadline = setTimeout(fire, ms);
  }

  protected timedOut(): void {
    this.answer(failure('TOOL_TIMEOUT', `tool timed out after ${this.task.timeoutMs} ms`));
  }
}
