/**
 * What every tier's call has in common on the host: it answers exactly once (whatever arrives later
 * is dropped), its deadline lives on the host's clock, and it delivers progress only while it waits
 * for its answer, at most {@link MAX_PROGRESS_MESSAGES} messages; the same holds for what the tool
 * printed, forwarded while it runs (at most {@link MAX_LOG_NOTES} messages, `maxLogChars` characters
 * in all). A listener that throws loses that message, never the call: the same in every tier.
 */
import type { ToolErrorCode } from '../boundary/errors.js';
import type { CallReply } from '../boundary/protocol.js';
import {
  type CallTask,
  type CapturedLog,
  MAX_LOG_NOTES,
  MAX_PROGRESS_MESSAGES,
  type WorkerError,
} from '../boundary/protocol.js';
import type { JsonValue } from '../boundary/tool-contract.js';

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
  /** What the tool printed, as it was forwarded (calls whose task has `forwardLogs`). */
  onLogs?: ((logs: CapturedLog[]) => void) | undefined;
  /** The most characters of forwarded output this call delivers. */
  maxLogChars: number;
  resolve: (reply: PoolReply) => void;
  onAnswered: () => void;
}

export abstract class AnswerOnce {
  readonly task: CallTask;
  readonly #onProgress: ((data: JsonValue) => void) | undefined;
  readonly #onLogs: ((logs: CapturedLog[]) => void) | undefined;
  readonly #maxLogChars: number;
  readonly #resolve: (reply: PoolReply) => void;
  readonly #onAnswered: () => void;
  #answered = false;
  #deadline: NodeJS.Timeout | undefined;
  #progressReceived = 0;
  #logNotesReceived = 0;
  #logCharsDelivered = 0;

  constructor(waiters: CallWaiters) {
    this.task = waiters.task;
    this.#onProgress = waiters.onProgress;
    this.#onLogs = waiters.onLogs;
    this.#maxLogChars = waiters.maxLogChars;
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
    this.#resolve(this.#logCharsDelivered === 0 ? reply : this.#withinLogCap(reply));
  }

  /**
   * The reply's logs cut to what the call's cap leaves after its forwarded output: an honest worker
   * counts both against one cap, a forged reply must not get twice as much past it.
   */
  #withinLogCap(reply: PoolReply): PoolReply {
    let room = this.#maxLogChars - this.#logCharsDelivered;
    const logs: CapturedLog[] = [];
    let cut = 0;
    for (const log of reply.logs) {
      const kept = log.text.slice(0, Math.max(room, 0));
      room -= kept.length;
      cut += log.text.length - kept.length;
      if (kept !== '') logs.push({ stream: log.stream, text: kept });
    }
    return cut === 0 ? reply : { ...reply, logs, droppedLogChars: reply.droppedLogChars + cut };
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

  /** `log` messages that reached the host for this call, delivered or not. */
  protected get logNotesReceived(): number {
    return this.#logNotesReceived;
  }

  /** Whether a `log` message would still be delivered (worth parsing). */
  protected get wantsLogs(): boolean {
    return !this.#answered && this.#onLogs !== undefined && this.#logNotesReceived < MAX_LOG_NOTES;
  }

  /**
   * Counts one `log` message and delivers its entries (`undefined`: malformed, dropped), as long as
   * the call's forwarded output stays within `maxLogChars` characters: the worker's cap, enforced
   * again here, since a worker's count is a claim.
   */
  protected logs(logs: CapturedLog[] | undefined): void {
    this.#logNotesReceived += 1;
    if (this.#answered || this.#logNotesReceived > MAX_LOG_NOTES) return;
    if (logs === undefined || this.#onLogs === undefined) return;
    let characters = 0;
    for (const log of logs) characters += log.text.length;
    if (characters === 0 || this.#logCharsDelivered + characters > this.#maxLogChars) return;
    this.#logCharsDelivered += characters;
    try {
      this.#onLogs(logs);
    } catch {
      // An 'output' listener that throws loses those lines, never the call or its worker.
    }
  }

  /** (Re)arms the deadline on the host's clock; `fire` runs when it passes unanswered. */
  protected armDeadline(ms: number, fire: () => void): void {
    clearTimeout(this.#deadline);
    this.#deadline = setTimeout(fire, ms);
  }

  /** No deadline until it is armed again. */
  protected disarmDeadline(): void {
    clearTimeout(this.#deadline);
    this.#deadline = undefined;
  }

  protected timedOut(): void {
    this.answer(failure('TOOL_TIMEOUT', `tool timed out after ${this.task.timeoutMs} ms`));
  }
}
