/**
 * The host's parse of everything a package's process sends (the protocol is
 * boundary/child-protocol.ts). Tool code runs on that process's main thread, beside the code that
 * writes to the channel, and can take the whole process over (write to its channel, patch its memory
 * through `/proc/self/mem`), so every message is untrusted input, exactly like a worker's: checked
 * with the same parsers (replies, progress, read replies, sizes, codes), rebuilt as fresh values,
 * never thrown on.
 */

import { CHILD_REPLY_CODES } from '../../boundary/child-protocol.js';
import type { LeftOutCode } from '../../boundary/errors.js';
import {
  type Parsed,
  parseCallReply,
  parseLogs,
  parseProgressData,
  type ReplyLimits,
} from '../../boundary/parse-call-reply.js';
import { parseLocation, parseReadReply } from '../../boundary/parse-read-reply.js';
import type { CallReply, CapturedLog, ReadOutcome } from '../../boundary/protocol.js';
import { safeMessage } from '../../boundary/sanitize.js';
import type { JsonValue } from '../../boundary/tool-contract.js';
import { count, own, record } from '../../boundary/untrusted.js';
import { maxChildFrameBytes, maxChildFrameValues, maxChildNoteBytes } from './frame-bounds.js';
import { FrameReader } from './frame-reader.js';

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
