/**
 * What the loop needs from a tool host. `ToolHost` has it; so can any host-shaped object (a test double,
 * a host in another process behind a proxy), which keeps the loop independent of the host's class.
 */

import type { ToolOutcome } from '../boundary/outcome.js';
import type { ToolInfo } from '../declaration/check.js';

/** A tool host as the loop uses it. */
export interface LoopHost {
  /** The tools offered right now: one snapshot, taken once per request. */
  list(): readonly ToolInfo[];
  /** Runs one call. A tool's fault is an error outcome; a rejection means the host itself failed. */
  call(name: string, args: unknown, options?: LoopHostCallOptions): Promise<ToolOutcome>;
}

/** What the loop passes with each host call. */
export interface LoopHostCallOptions {
  /** The `tool_use` id. */
  callId?: string;
  /** Names of tools this loop does not offer (the tool sees them as `ctx.withheld`). */
  withheld?: readonly string[];
  /** The loop's signal: aborting the loop aborts the call. */
  signal?: AbortSignal;
  /** The loop's `toolTimeoutMs`: caps the tool's own timeout. */
  timeoutMs?: number;
}
