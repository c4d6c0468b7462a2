/**
 * One call of a process-tier pool, on the host: answers exactly once, with its deadline on the
 * host's clock. The deadline is armed when the package's process says the call was handed to a
 * worker; a process that never says so (a broken or hostile one) still can't hold the call, since a
 * call sent to it must start within an allowance or it answers as timed out. Progress is delivered
 * only while the call waits for its answer, up to the protocol's cap, and so is forwarded output
 * (see AnswerOnce).
 */

import type { CapturedLog } from '../boundary/protocol.js';
import type { JsonValue } from '../boundary/tool-contract.js';
import { AnswerOnce } from '../calls/answer-once.js';

/**
 * How long after it was sent a call may wait to start, beyond its own timeout: a worker starting in
 * the process (tens of ms, seconds on a loaded machine). The host sends a process no more calls than
 * it has threads, so a call sent never waits behind another.
 */
export const START_ALLOWANCE_MS = 30_000;

export class ProcessCall extends AnswerOnce {
  #started = false;

  /** Sent to a process: it has the allowance to start the call; `onStuck` if it doesn't. */
  sent(onStuck: () => void): void {
    if (this.answered) return;
    this.armDeadline(this.task.timeoutMs + START_ALLOWANCE_MS, () => {
      this.timedOut();
      onStuck();
    });
  }

  /** The process handed the call to a worker: the timeout counts from now, once. */
  started(): void {
    if (this.answered || this.#started) return;
    this.#started = true;
    this.armDeadline(this.task.timeoutMs, () => this.timedOut());
  }

  /** A progress message for this call (`undefined`: one whose data was not plain, dropped). */
  override progress(data: JsonValue | undefined): void {
    super.progress(data);
  }

  /** What the call printed, forwarded while it runs (`undefined`: malformed, dropped). */
  override logs(logs: CapturedLog[] | undefined): void {
    super.logs(logs);
  }
}
