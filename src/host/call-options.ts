/**
 * The options of one call (`host.call(name, args, options)`): on their own, since the call path
 * reads them and the host's options module reads the call path's settings.
 */

/** Options of {@link ToolHost.call}. */
export interface CallOptions {
  /** @default a fresh id */
  callId?: string;
  /** @default 'default' */
  sessionId?: string;
  /** Names of tools the caller does not offer; the tool sees them as `ctx.withheld`. @default [] */
  withheld?: readonly string[];
  /** Aborting it ends the call with `CALL_ABORTED` (the worker is terminated). */
  signal?: AbortSignal;
  /** Caps the tool's own `timeoutMs`: a positive integer (anything else rejects with `INVALID_OPTION`). */
  timeoutMs?: number;
}
