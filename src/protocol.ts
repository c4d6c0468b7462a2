/**
 * The one typed protocol between the host and its workers. Everything here crosses a structured
 * clone, so it is plain data: results are `{ ok: true, ... } | { ok: false, error }`, never thrown
 * errors (error classes and `throw null` don't survive the crossing).
 */
import type { ToolErrorCode } from './errors.js';
import type { JsonValue, ToolContentBlock } from './tool-module.js';

/** The raw declaration as read in the throwaway worker, before the host checks it field by field. */
export interface RawDeclaration {
  name: FieldRead;
  description: FieldRead;
  parameterSchema: FieldRead;
  timeoutMs: FieldRead;
  concurrency: FieldRead;
  hasRun: boolean;
  hasSelftest: boolean;
}

/** One declaration field: its value, absent, or why it could not be read. */
export type FieldRead =
  | { state: 'value'; value: JsonValue }
  | { state: 'missing' }
  | { state: 'threw'; message: string }
  | { state: 'not-plain'; message: string };

/** What the declaration reader posts back. */
export type ReadReply =
  | { ok: true; declaration: RawDeclaration }
  | { ok: false; error: { code: 'IMPORT_FAILED' | 'DECLARATION_THREW'; message: string } };

/** What the declaration reader gets as `workerData`. */
export interface ReadRequest {
  moduleUrl: string;
}

/**
 * One call, as a piscina task: only what changes from call to call, since every field is cloned
 * across the thread boundary on every call. What a pool's calls share is {@link CallSettings}.
 */
export interface CallTask {
  /** `wake` only makes piscina start a worker; the worker answers it at once. */
  kind: 'run' | 'selftest' | 'wake';
  /** Unique per task in this host; routes the worker's messages, and names the call's tmpDir. */
  taskId: string;
  /** What the tool sees as `ctx.callId` (the `tool_use` id from the loop). */
  callId: string;
  sessionId: string;
  moduleUrl: string;
  args: unknown;
  withheld: readonly string[];
  timeoutMs: number;
  /** The call's slot in the pool's {@link CallStarts}; the pool assigns it when it dispatches. */
  slot: number;
  /**
   * What the worker stamps into the slot: unique per dispatch (never 0), so a worker ended late
   * can't mark the slot's next call as started.
   */
  stamp: number;
}

/**
 * When each dispatched call started running, shared between a pool and its workers: the worker
 * stamps its call's slot as it starts, so the host counts a call's timeout from then without a
 * message per call. `stamped[slot]` holding the call's stamp (set with Atomics, after the time is
 * written) says that `times[slot]` holds its start, in ms of {@link now}.
 */
export interface CallStarts {
  stamped: Int32Array;
  times: Float64Array;
}

export function createCallStarts(slots: number): CallStarts {
  return {
    stamped: new Int32Array(new SharedArrayBuffer(4 * slots)),
    times: new Float64Array(new SharedArrayBuffer(8 * slots)),
  };
}

/** A clock that reads the same in every thread of the process (ms). */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export function stampCallStart(starts: CallStarts, task: CallTask): void {
  starts.times[task.slot] = now();
  // The atomic store publishes the time written before it.
  Atomics.store(starts.stamped, task.slot, task.stamp);
}

export function clearCallStart(starts: CallStarts, slot: number): void {
  Atomics.store(starts.stamped, slot, 0);
}

export function readCallStart(starts: CallStarts, task: CallTask): number | undefined {
  return Atomics.load(starts.stamped, task.slot) === task.stamp ? starts.times[task.slot] : undefined;
}

/** What every call of one pool shares (a call worker's `workerData`). */
export interface CallSettings {
  dataDir: string;
  /** The domain's tmp folder: each call's tmpDir is `call-<taskId>` inside it, made on first use. */
  tmpDir: string;
  /** A hard cap on the size of the encoded text; larger output is cut before it crosses. */
  maxResultBytes: number;
  /** How much of the tool's stdout/stderr to keep per call. */
  maxLogBytes: number;
}

/** A call's own tmpDir. */
export function callTmpDir(settings: CallSettings, task: CallTask): string {
  return `${settings.tmpDir}/call-${task.taskId}`;
}

/** A call's reply, encoded inside the worker. */
export type CallReply = {
  logs: CapturedLog[];
  droppedLogBytes: number;
  /** How many progress messages the tool sent before this reply (the host delivers them first). */
  progressSent: number;
} & (
  | { ok: true; content: ToolContentBlock[]; isError: boolean; details?: JsonValue; cutBytes: number }
  | { ok: false; error: { code: ToolErrorCode; message: string } }
);

export interface CapturedLog {
  stream: 'stdout' | 'stderr';
  text: string;
}

/** Marks messages that our call worker posts on `parentPort` (piscina re-emits them as `message`). */
export const WORKER_MESSAGE_TAG = 'toolhost:worker';

/** Out-of-band messages from a call worker to the host, routed by `taskId`. */
export type WorkerMessage =
  | { tag: typeof WORKER_MESSAGE_TAG; type: 'progress'; taskId: string; data: JsonValue }
  | {
      tag: typeof WORKER_MESSAGE_TAG;
      type: 'fault';
      taskId: string | null;
      error: { code: ToolErrorCode; message: string };
      logs: CapturedLog[];
    };
