/**
 * The protocol between the host and a package's process (the process tier), and the host's parse of
 * everything that process sends. Tool code runs on that process's main thread, beside the code that
 * writes to the channel, and can take the whole process over (write to its channel, patch its memory
 * through `/proc/self/mem`), so every message is untrusted input, exactly like a worker's: checked
 * with the same parsers (replies, progress, read replies, sizes, codes), rebuilt as fresh values,
 * never thrown on.
 */

import type { LeftOutCode, ToolErrorCode } from '../../boundary/errors.js';
import {
  type Parsed,
  parseCallReply,
  parseLogs,
  parseProgressData,
  type ReplyLimits,
} from '../../boundary/parse-call-reply.js';
import { parseLocation, parseReadReply } from '../../boundary/parse-read-reply.js';
import {
  type CallReply,
  type CallSettings,
  type CallTask,
  type CapturedLog,
  FAULT_CODES,
  REPLY_ERROR_CODES,
} from '../../boundary/protocol.js';
import { safeMessage } from '../../boundary/sanitize.js';
import type { JsonValue } from '../../boundary/tool-contract.js';
import { count, own, record } from '../../boundary/untrusted.js';
import type { PoolLimits } from '../../calls/pool-workers.js';
import type { ReadOutcome } from '../../declaration/read-worker.js';
import { maxChildFrameBytes, maxChildFrameValues, maxChildNoteBytes } from './frame-bounds.js';
import { FrameReader } from './frame-reader.js';

/**
 * What a package's process is for: running a version's calls (one at a time, on its main thread),
 * or reading its declarations. `limits` are its pool's: the process reads its call settings, its
 * environment and whether addons are allowed.
 */
export type ChildInit =
  | { type: 'init'; mode: 'calls'; limits: PoolLimits }
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

/** How a declaration read may fail (see readInWorker). */
const READ_FAILURE_CODES: ReadonlySet<LeftOutCode> = new Set<LeftOutCode>([
  'IMPORT_FAILED',
  'DECLARATION_THREW',
  'DECLARATION_INVALID',
  'DECLARATION_OUT_OF_MEMORY',
  'DECLARATION_EXITED',
  'DECLARATION_CRASHED',
]);

/** Task ids are the host's own (`String(sequence)`); anything longer is not one of them. */
const MAX_TASK_ID_LENGTH = 32;

/** A message from a package's process, as the host may believe it. */
export type ChildNote =
  | { type: 'hello' }
  | { type: 'ready' }
  | { type: 'progress'; taskId: string; data: JsonValue | undefined }
  | { type: 'log'; taskId: string; logs: CapturedLog[] | undefined }
  | { type: 'reply'; taskId: string; reply: Parsed<CallReply> }
  | { type: 'fault'; message: string }
  | { type: 'read'; readId: number; outcome: ReadOutcome };

function taskIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TASK_ID_LENGTH
    ? value
    : undefined;
}

/**
 * Parses one message. `undefined` is a message that is not part of the protocol at all: the host
 * then ends the process (it is not running toolhost's code as written any more). A reply or progress
 * whose *content* is bad is still a note, so that the call it names gets the answer.
 */
export function parseChildMessage(value: unknown, limits: ReplyLimits): ChildNote | undefined {
  const message = record(value);
  const type = own(message, 'type');
  if (type === 'hello' || type === 'ready') return { type };
  if (type === 'fault') return { type, message: safeMessage(own(message, 'message'), 'no message') };
  if (type === 'read') {
    const readId = count(own(message, 'readId'), Number.MAX_SAFE_INTEGER);
    const outcome = parseReadOutcome(own(message, 'outcome'));
    return readId === undefined || outcome === undefined ? undefined : { type, readId, outcome };
  }
  const taskId = taskIdOf(own(message, 'taskId'));
  if (taskId === undefined) return undefined;
  if (type === 'progress') {
    const data = parseProgressData(own(message, 'data'));
    return { type, taskId, data: data.ok ? data.value : undefined };
  }
  if (type === 'log') {
    const logs = parseLogs(own(message, 'logs'), limits.maxLogChars);
    return { type, taskId, logs: logs.ok ? logs.value : undefined };
  }
  if (type === 'reply') {
    return { type, taskId, reply: parseCallReply(own(message, 'reply'), limits, CHILD_REPLY_CODES) };
  }
  return undefined;
}

/** A read's outcome as a process reported it: a declaration is checked field by field again. */
function parseReadOutcome(value: unknown): ReadOutcome | undefined {
  const outcome = record(value);
  const state = own(outcome, 'state');
  if (state === 'timed-out') {
    return { state, reason: safeMessage(own(outcome, 'reason'), 'the read took too long') };
  }
  if (state === 'failed') {
    const code = own(outcome, 'code');
    if (typeof code !== 'string' || !READ_FAILURE_CODES.has(code as LeftOutCode)) return undefined;
    const failed: ReadOutcome & { state: 'failed' } = {
      state,
      code: code as LeftOutCode,
      reason: safeMessage(own(outcome, 'reason'), 'no reason'),
    };
    // Where it happened, as the worker tier's reads say it: a syntax error is located by the host.
    const location = parseLocation(own(outcome, 'location'));
    if (location !== undefined) failed.location = location;
    if (own(outcome, 'syntaxError') === true) failed.syntaxError = true;
    return failed;
  }
  if (state !== 'read') return undefined;
  const parsed = parseReadReply({ ok: true, declaration: own(outcome, 'declaration') });
  if (!parsed.ok) {
    return {
      state: 'failed',
      code: 'DECLARATION_INVALID',
      reason: `the package's process sent a malformed declaration: ${parsed.reason}`,
    };
  }
  return parsed.reply.ok ? { state: 'read', declaration: parsed.reply.declaration } : undefined;
}

/**
 * What a package process sends on its channel, read as it arrives: frames cut and bounded
 * (frames.ts), each message parsed as untrusted. The first breach ends the reading, with the
 * reason its process is ended for.
 */
export class ChildNoteReader {
  readonly #frames: FrameReader;
  readonly #limits: ReplyLimits;
  readonly #maxNoteBytes: number;

  constructor(limits: ReplyLimits) {
    this.#limits = limits;
    this.#maxNoteBytes = maxChildNoteBytes(limits);
    this.#frames = new FrameReader({
      maxFrameBytes: maxChildFrameBytes(limits),
      maxFrameValues: maxChildFrameValues(limits),
    });
  }

  /**
   * Reads a chunk and hands over each message it completes, while `onNote` says to go on.
   * @returns `ok: false` with the reason when the chunk broke the protocol (or the host failed to handle a message)
   */
  push(chunk: Buffer, onNote: (note: ChildNote) => boolean): { ok: true } | { ok: false; reason: string } {
    try {
      const result = this.#frames.push(chunk);
      if (!result.ok) return { ok: false, reason: `broke the protocol: ${result.reason}` };
      const { values, sizes } = result;
      for (let index = 0; index < values.length; index++) {
        const note = parseChildMessage(values[index], this.#limits);
        if (note === undefined)
          return { ok: false, reason: 'broke the protocol: it sent a message that is not part of it' };
        const bytes = sizes[index] ?? 0;
        if (note.type !== 'reply' && note.type !== 'read' && bytes > this.#maxNoteBytes) {
          return {
            ok: false,
            reason: `broke the protocol: it sent a ${note.type} message over the ${this.#maxNoteBytes}-byte bound`,
          };
        }
        if (!onNote(note)) break;
      }
      return { ok: true };
    } catch (error) {
      return { ok: false, reason: `sent a message the host could not handle: ${String(error)}` };
    }
  }
}
