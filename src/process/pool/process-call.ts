/**
 * One call of a process-tier pool, on the host: answers exactly once, with its deadline on the
 * host's clock, armed the moment the call is sent. A process is sent a call only when it is ready
 * and holds none, so its one thread takes the call as soon as it is free (at once, unless what an
 * earlier call left running holds it), and the timeout counts from then; nothing the process says
 * can move the deadline. Progress is delivered only
 * while the call waits for its answer, up to the protocol's cap, and so is forwarded output (see
 * AnswerOnce).
 */

import type { CapturedLog } from '../../boundary/protocol.js';
import type { JsonValue } from '../../boundary/tool-contract.js';
import { AnswerOnce } from '../../calls/answer-once.js';

export class ProcessCall extends AnswerOnce {
  /** Sent to a process: it runs from now, and its timeout counts from now. */
  sent(): void {
    if (this.answered) return;
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
