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

/** One call, as a piscina task. */
export interface CallTask {
  kind: 'run' | 'selftest';
  /** Unique per task in this host; routes the worker's messages to the pending call. */
  taskId: string;
  /** What the tool sees as `ctx.callId` (the `tool_use` id from the loop). */
  callId: string;
  sessionId: string;
  moduleUrl: string;
  args: unknown;
  dataDir: string;
  /** The call's own directory; created lazily inside the worker, removed when the call ends. */
  tmpDir: string;
  withheld: readonly string[];
  timeoutMs: number;
  /** A hard cap on the size of the encoded text; larger output is cut before it crosses. */
  maxResultBytes: number;
  /** How much of the tool's stdout/stderr to keep per call. */
  maxLogBytes: number;
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
  | { tag: typeof WORKER_MESSAGE_TAG; type: 'started'; taskId: string }
  | { tag: typeof WORKER_MESSAGE_TAG; type: 'progress'; taskId: string; data: JsonValue }
  | {
      tag: typeof WORKER_MESSAGE_TAG;
      type: 'fault';
      taskId: string | null;
      error: { code: ToolErrorCode; message: string };
      logs: CapturedLog[];
    };
