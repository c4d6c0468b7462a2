/**
 * The one typed protocol between the host and its workers. Everything here crosses a structured
 * clone, so it is plain data: results are `{ ok: true, ... } | { ok: false, error }`, never thrown
 * errors (error classes and `throw null` don't survive the crossing).
 */

import type { LeftOutCode, ToolErrorCode } from './errors.js';
import type { JsonObject, JsonValue, ToolContentBlock } from './tool-contract.js';

/** The raw declaration as read in the throwaway worker, before the host checks it field by field. */
export interface RawDeclaration {
  name: FieldRead;
  description: FieldRead;
  parameterSchema: FieldRead;
  timeoutMs: FieldRead;
  concurrency: FieldRead;
  title: FieldRead;
  annotations: FieldRead;
  outputSchema: FieldRead;
  /** The schema field the module declares under another tool API's name, when `parameterSchema` is missing. */
  misnamedSchema: MisnamedSchema | null;
  hasRun: boolean;
  hasSelftest: boolean;
}

/** The names other tool APIs give the arguments' schema, which a module may declare by mistake. */
export const MISNAMED_SCHEMA_FIELDS = ['inputSchema', 'input_schema'] as const;
export type MisnamedSchema = (typeof MISNAMED_SCHEMA_FIELDS)[number];

/** The declaration fields the reader reads, each a value or a zero-argument function. */
export const DECLARATION_FIELDS = [
  'name',
  'description',
  'parameterSchema',
  'timeoutMs',
  'concurrency',
  'title',
  'annotations',
  'outputSchema',
] as const;

/** One declaration field: its value, absent, or why it could not be read. */
export type FieldRead =
  | { state: 'value'; value: JsonValue }
  | { state: 'missing' }
  | { state: 'threw'; message: string; location?: string }
  | { state: 'not-plain'; message: string };

/** What the declaration reader posts back. */
export type ReadReply = { ok: true; declaration: RawDeclaration } | { ok: false; error: ReadError };

/**
 * Why a module could not be read. `location` is where (`file:line:column`, a path of the snapshot);
 * a syntax error has none (Node's `import()` gives no location for one), `syntaxError` says so.
 */
export interface ReadError {
  code: 'IMPORT_FAILED' | 'DECLARATION_THREW';
  message: string;
  location?: string;
  syntaxError?: boolean;
}

/**
 * How one declaration read ends: read, failed (where, when the reader could say), or over its time.
 * The host's own reads (declaration/read-worker.ts) end so, and a package's process sends its reads'
 * outcomes so (child-protocol.ts), which the host parses again.
 */
export type ReadOutcome =
  | { state: 'read'; declaration: RawDeclaration }
  | { state: 'failed'; code: LeftOutCode; reason: string; location?: string; syntaxError?: boolean }
  | { state: 'timed-out'; reason: string };

/** A failure as a worker reports it; `stack` is the tool's own frames, for the host only. */
export interface WorkerError {
  code: ToolErrorCode;
  message: string;
  stack?: string;
}

/** The most a declaration field may hold (about its JSON size); the schema has its own, lower bound. */
export const MAX_FIELD_BYTES = 1024 * 1024;

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
  /**
   * Someone listens to this call's output while it runs: the worker forwards what the tool prints
   * as `log` messages. Absent (most calls) it keeps everything for the reply, and costs nothing.
   */
  forwardLogs?: true;
  /**
   * Set when the task is posted to a worker behind a running call: the cell of the claims' memory
   * and the ticket in it. The worker starts the call only if it swaps the ticket for its negation.
   */
  claim?: [slot: number, ticket: number] | undefined;
}

/** A clock that reads the same in every thread of the process (ms). */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** What every call of one pool shares (a call worker's `workerData`). */
export interface CallSettings {
  dataDir: string;
  /** The domain's tmp folder: each call's tmpDir is `call-<taskId>` inside it, made on first use. */
  tmpDir: string;
  /** A hard cap on the size of the encoded text; larger output is cut before it crosses. */
  maxResultBytes: number;
  /** How much of the tool's stdout/stderr to keep per call. */
  maxLogChars: number;
  /**
   * The process tier in its sandbox, for a package held to a list of hosts: its workers route
   * `fetch`, `http` and `https` through the package's egress proxy (`setup` is the module that does
   * it, `socketPath` the proxy's socket) before any tool code runs.
   */
  egress?: { setup: string; socketPath: string; trustCertificates?: string };
  /**
   * The process tier in its sandbox, for a package granted no network at all: a connection that
   * fails there was refused by the tier, and is answered as `TOOL_ACCESS_DENIED` naming where it went.
   */
  networkOff?: boolean;
}

/** A call's own tmpDir. */
export function callTmpDir(settings: Pick<CallSettings, 'tmpDir'>, task: Pick<CallTask, 'taskId'>): string {
  return `${settings.tmpDir}/call-${task.taskId}`;
}

/** A result as content for the model: what `encodeResult` makes, and what a reply carries. */
export interface EncodedContent {
  ok: true;
  content: ToolContentBlock[];
  isError: boolean;
  details?: JsonValue;
  /** A structured result's object (the tool's `structured(...)`), checked against its outputSchema. */
  structuredContent?: JsonObject;
  cutBytes: number;
}

/** A call's reply, encoded inside the worker. */
export type CallReply = {
  logs: CapturedLog[];
  droppedLogChars: number;
  /** How many progress messages the tool sent before this reply (the host delivers them first). */
  progressSent: number;
  /**
   * How many `log` messages were forwarded before this reply (the host delivers them first); `logs`
   * holds only what was not forwarded. Absent: none.
   */
  logNotesSent?: number;
} & (EncodedContent | { ok: false; error: WorkerError });

export interface CapturedLog {
  stream: 'stdout' | 'stderr';
  text: string;
}

/** Marks messages that our workers post on `parentPort`. */
export const WORKER_MESSAGE_TAG = 'toolhost:worker';

/** At most this many progress messages per call cross (each side enforces it). */
export const MAX_PROGRESS_MESSAGES = 1000;

/** At most this many bytes (about the size of its JSON) per progress message. */
export const MAX_PROGRESS_BYTES = 65_536;

/** At most this many `log` messages per call cross (each side enforces it); the rest comes with the reply. */
export const MAX_LOG_NOTES = 1000;

/**
 * A worker forwards what a call printed at most this often: a tool printing in a tight loop costs
 * the host a message per interval, not one per write.
 */
export const LOG_NOTE_INTERVAL_MS = 10;

/** The codes a call worker may put in a reply's error (anything else is a bad reply). */
export const REPLY_ERROR_CODES: ReadonlySet<ToolErrorCode> = new Set<ToolErrorCode>([
  'TOOL_THREW',
  'TOOL_ACCESS_DENIED',
  'TOOL_STACK_OVERFLOW',
  'TOOL_TIMEOUT',
  'TOOL_BAD_RESULT',
  'TOOL_LOAD_FAILED',
]);

/** The codes a call worker may report in a fault (a fault ends the worker). */
export const FAULT_CODES: ReadonlySet<ToolErrorCode> = new Set<ToolErrorCode>([
  'TOOL_CRASHED',
  'TOOL_UNHANDLED_REJECTION',
  'TOOL_EXITED',
]);

/**
 * Out-of-band messages from a call worker to the host. `hello` is posted once, while the worker
 * starts and before any tool code has run in it: it names the worker's OS thread, so the host can end
 * child processes that keep a terminated worker's thread from ending.
 */
export type WorkerMessage =
  | { tag: typeof WORKER_MESSAGE_TAG; type: 'hello'; threadId: number; osThreadId: number | null }
  | { tag: typeof WORKER_MESSAGE_TAG; type: 'progress'; taskId: string; data: JsonValue }
  /** What the call printed since its last `log` message (calls with `forwardLogs` only). */
  | { tag: typeof WORKER_MESSAGE_TAG; type: 'log'; taskId: string; logs: CapturedLog[] }
  | {
      tag: typeof WORKER_MESSAGE_TAG;
      type: 'fault';
      taskId: string | null;
      error: WorkerError;
      logs: CapturedLog[];
    };
