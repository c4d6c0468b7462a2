/**
 * The options of one call (`host.call(name, args, options)`): on their own, since the call path
 * reads them and the host's options module reads the call path's settings.
 */

import type { ToolOutputEvent } from './events.js';

/** Options of {@link ToolHost.call}. */
export interface CallOptions {
  /** @default a fresh id */
  callId?: string;
  /** @default 'default' */
  sessionId?: string;
  /** Names of tools the caller does not offer; the tool sees them as `ctx.withheld`. @default [] */
  withheld?: readonly string[];
  /** Aborting it ends the call with `CALL_ABORTED` (a started call's worker is terminated; a waiting call never runs). */
  signal?: AbortSignal;
  /** Caps the tool's own `timeoutMs`: a positive integer (anything else rejects with `INVALID_OPTION`). */
  timeoutMs?: number;
  /**
   * Hears what the tool prints while the call runs: its worker forwards the lines as they are
   * printed (gathered, at most one message every 10 ms and 1000 a call, within `maxLogChars`), and
   * what is left comes with the answer, each line once; lines printed after the answer are dropped.
   * The host's `output` event gets the same events. Without it, a call's output is one `output`
   * event with its answer, and nothing is forwarded. A listener that throws loses those lines,
   * never the call.
   */
  onOutput?: (event: ToolOutputEvent) => void;
}
