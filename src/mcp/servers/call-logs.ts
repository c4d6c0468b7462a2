/**
 * What a server logs (`notifications/message`) while a call runs, kept as that call's output, as a
 * tool's printing is: at most `maxLogChars` characters in at most {@link MAX_LOG_NOTES} lines, the
 * rest counted as dropped.
 */
import { type CapturedLog, MAX_LOG_NOTES } from '../../boundary/protocol.js';
import type { PoolReply } from '../../calls/answer-once.js';

export class CallLogs {
  readonly #maxChars: number;
  readonly #logs: CapturedLog[] = [];
  #chars = 0;
  #dropped = 0;

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  /** One line the server logged. */
  add(line: string): void {
    if (this.#logs.length >= MAX_LOG_NOTES || this.#chars + line.length > this.#maxChars) {
      this.#dropped += line.length;
      return;
    }
    this.#chars += line.length;
    this.#logs.push({ stream: 'stderr', text: line });
  }

  /** `reply` with what was logged during its call. */
  withReply(reply: PoolReply): PoolReply {
    if (this.#logs.length === 0 && this.#dropped === 0) return reply;
    return {
      ...reply,
      logs: [...reply.logs, ...this.#logs],
      droppedLogChars: reply.droppedLogChars + this.#dropped,
    };
  }
}
