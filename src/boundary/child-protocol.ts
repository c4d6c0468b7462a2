/**
 * The typed protocol between the host and a package's process (the process tier): what the host
 * sends it, what it sends back, the codes it may answer a call with, and what the process hands the
 * code that runs its calls (workers/call/process-calls.ts). Both sides import it; only the host
 * believes nothing of what crosses it: its parse of what a process sends is process/channel/child-notes.ts.
 */

import type { ToolErrorCode } from './errors.js';
import {
  type CallReply,
  type CallSettings,
  type CallTask,
  type CapturedLog,
  FAULT_CODES,
  REPLY_ERROR_CODES,
  type ReadOutcome,
} from './protocol.js';
import type { JsonValue } from './tool-contract.js';

/**
 * What a calls process reads of its pool's limits: its call settings, its tools' environment (the
 * host's `envAllowList`) and whether addons are allowed. The host sends its pool's limits whole.
 */
export interface ChildCallLimits {
  call: CallSettings;
  env: Record<string, string>;
  allowAddons: boolean;
}

/**
 * What a package's process is for: running a version's calls (one at a time, on its main thread),
 * or reading its declarations.
 */
export type ChildInit =
  | { type: 'init'; mode: 'calls'; limits: ChildCallLimits }
  | { type: 'init'; mode: 'reads'; heapMb: number; timeoutMs: number };

/** What the host sends a package's process: at most one call at a time. */
export type HostMessage =
  | ChildInit
  | { type: 'run'; task: CallTask }
  | { type: 'read'; readId: number; moduleUrl: string; execArgv: string[] };

/** What a package's process sends, as its own code writes it (the host trusts none of it). */
export type ChildMessage =
  | { type: 'hello' }
  | { type: 'ready' }
  | { type: 'progress'; taskId: string; data: JsonValue }
  | { type: 'log'; taskId: string; logs: CapturedLog[] }
  | { type: 'reply'; taskId: string; reply: CallReply }
  | { type: 'fault'; message: string }
  | { type: 'read'; readId: number; outcome: ReadOutcome };

/**
 * The codes a process may answer a call with: a worker's reply codes, and the faults that end the
 * process (it answers its call with them before it exits). Never `HOST_CLOSED` or `CALL_ABORTED`:
 * only the host says those; nor `TOOL_OUT_OF_MEMORY`: a process out of heap can say nothing, and the
 * host tells that from how it ended.
 */
export const CHILD_REPLY_CODES: ReadonlySet<ToolErrorCode> = new Set<ToolErrorCode>([
  ...REPLY_ERROR_CODES,
  ...FAULT_CODES,
]);

/** What a package's process hands the code that runs its calls (workers/call/process-calls.ts). */
export interface ProcessCallsOptions {
  settings: CallSettings & { allowAddons: boolean; permissionTier?: 'strict' | 'process' };
  /** The variables the package's tools see (the host's `envAllowList`); the rest is cleared. */
  env: Record<string, string>;
  /** Writes one message on the channel, at once (a fault's reply must be out before the exit). */
  send(message: ChildMessage): void;
  /** Node's own exit, taken before any tool code could replace it. */
  exit(code?: number): never;
}

/** Readies a package's process for tools; resolves to what runs a task the host sends. */
export type StartProcessCalls = (options: ProcessCallsOptions) => Promise<(task: CallTask) => void>;
