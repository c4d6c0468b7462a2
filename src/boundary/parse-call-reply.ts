/**
 * The host's parse of everything a call worker sends: replies, progress, faults and hellos. A
 * TypeScript type on a message from a worker is a claim; these functions make it a fact, or say why
 * not. They take any structured-clone value (null, a Map, a 5000-character code, a forged id), never
 * throw, and build fresh objects rather than passing a worker's object on.
 */

import { readContentBlock } from './content-blocks.js';
import type { ToolErrorCode } from './errors.js';
import { checkPlainData, MAX_DATA_DEPTH } from './plain-data.js';
import {
  type CallReply,
  type CapturedLog,
  FAULT_CODES,
  MAX_LOG_NOTES,
  MAX_PROGRESS_BYTES,
  MAX_PROGRESS_MESSAGES,
  REPLY_ERROR_CODES,
  WORKER_MESSAGE_TAG,
} from './protocol.js';
import { contentBytes, logBytes } from './reply-size.js';
import { safeMessage } from './sanitize.js';
import type { JsonObject, JsonValue, ToolContentBlock } from './tool-contract.js';
import { count, type Data, own, record } from './untrusted.js';

export interface ReplyLimits {
  maxResultBytes: number;
  maxLogChars: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

function fail<T>(reason: string): Parsed<T> {
  return { ok: false, reason };
}

/** The captured output a worker sends with a reply or a fault: bounded by `maxLogChars` characters. */
export function parseLogs(value: unknown, maxLogChars: number): Parsed<CapturedLog[]> {
  if (!Array.isArray(value)) return fail('its logs are not an array');
  if (value.length > maxLogChars + 1) return fail('it has more log entries than characters allowed');
  const logs: CapturedLog[] = [];
  let characters = 0;
  for (const entry of value) {
    const log = record(entry);
    const stream = log === undefined ? undefined : own(log, 'stream');
    const text = log === undefined ? undefined : own(log, 'text');
    if ((stream !== 'stdout' && stream !== 'stderr') || typeof text !== 'string') {
      return fail('a log entry is malformed');
    }
    characters += text.length;
    if (characters > maxLogChars) return fail(`its logs are over the ${maxLogChars}-character cap`);
    logs.push({ stream, text });
  }
  return { ok: true, value: logs };
}

/** What every reply carries, ok or not: its captured output and the counts it claims. */
interface ReplyCounts {
  logs: CapturedLog[];
  droppedLogChars: number;
  progressSent: number;
  logNotesSent: number;
}

/**
 * A call's reply (piscina's task result): shape, types, codes and the size of all of it. `codes` are
 * the error codes it may carry (a package's process also relays the faults its workers had).
 */
export function parseCallReply(
  value: unknown,
  limits: ReplyLimits,
  codes: ReadonlySet<ToolErrorCode> = REPLY_ERROR_CODES,
): Parsed<CallReply> {
  const reply = record(value);
  if (reply === undefined) return fail('the reply is not an object');
  const counts = parseReplyCounts(reply, limits.maxLogChars);
  if (typeof counts === 'string') return fail(counts);
  const ok = own(reply, 'ok');
  if (ok === false) return parseFailedReply(reply, counts, codes);
  if (ok !== true) return fail('its ok flag is not a boolean');
  return parseSuccessfulReply(reply, counts, limits.maxResultBytes);
}

/**
 * The common reply, sent as its text alone (workers/call/own-replies.ts): a success of one text
 * block, nothing cut, no details, output or progress. Its size is checked as any reply's.
 */
export function parseCompactReply(text: string, maxResultBytes: number): Parsed<CallReply> {
  const content: ToolContentBlock[] = [{ type: 'text', text }];
  const size = contentBytes(content);
  if (size > maxResultBytes) return fail(`it is ${size} bytes, over the ${maxResultBytes}-byte cap`);
  const reply: CallReply = {
    ok: true,
    content,
    isError: false,
    cutBytes: 0,
    logs: [],
    droppedLogChars: 0,
    progressSent: 0,
    logNotesSent: 0,
  };
  return { ok: true, value: reply };
}

/** The reply's logs and counts, or why they are not what a worker sends. */
function parseReplyCounts(reply: Data, maxLogChars: number): ReplyCounts | string {
  const logs = parseLogs(own(reply, 'logs'), maxLogChars);
  if (!logs.ok) return logs.reason;
  const droppedLogChars = count(own(reply, 'droppedLogChars'), Number.MAX_SAFE_INTEGER);
  const progressSent = count(own(reply, 'progressSent'), MAX_PROGRESS_MESSAGES);
  if (droppedLogChars === undefined) return 'its droppedLogChars is not a count';
  if (progressSent === undefined) return `its progressSent is not a count up to ${MAX_PROGRESS_MESSAGES}`;
  const logNotesSent = Object.hasOwn(reply, 'logNotesSent')
    ? count(own(reply, 'logNotesSent'), MAX_LOG_NOTES)
    : 0;
  if (logNotesSent === undefined) return `its logNotesSent is not a count up to ${MAX_LOG_NOTES}`;
  return { logs: logs.value, droppedLogChars, progressSent, logNotesSent };
}

/** A reply with `ok: false`: an error with a code it may carry, a safe message and maybe a stack. */
function parseFailedReply(
  reply: Data,
  counts: ReplyCounts,
  codes: ReadonlySet<ToolErrorCode>,
): Parsed<CallReply> {
  const error = record(own(reply, 'error'));
  const code = error === undefined ? undefined : own(error, 'code');
  if (typeof code !== 'string' || !codes.has(code as ToolErrorCode)) {
    return fail('its error has no known code');
  }
  const message = safeMessage(own(error as Data, 'message'), 'the tool failed without a message');
  const stack = parseStack(own(error as Data, 'stack'));
  const parsed =
    stack === undefined
      ? { code: code as ToolErrorCode, message }
      : { code: code as ToolErrorCode, message, stack };
  const { logs, droppedLogChars, progressSent, logNotesSent } = counts;
  // Literals, not spreads: on Node 20 a spread with properties after it costs microseconds.
  return { ok: true, value: { ok: false, error: parsed, logs, droppedLogChars, progressSent, logNotesSent } };
}

/** A reply with `ok: true`: its content blocks, flags and plain data, all of it within the cap. */
function parseSuccessfulReply(reply: Data, counts: ReplyCounts, maxResultBytes: number): Parsed<CallReply> {
  const content = parseContent(own(reply, 'content'));
  if (typeof content === 'string') return fail(content);
  const isError = own(reply, 'isError');
  const cutBytes = count(own(reply, 'cutBytes'), Number.MAX_SAFE_INTEGER);
  if (typeof isError !== 'boolean') return fail('its isError is not a boolean');
  if (cutBytes === undefined) return fail('its cutBytes is not a count');
  const { logs, droppedLogChars, progressSent, logNotesSent } = counts;
  const parsed: CallReply = {
    ok: true,
    content,
    isError,
    cutBytes,
    logs,
    droppedLogChars,
    progressSent,
    logNotesSent,
  };
  let size = contentBytes(content) + logBytes(logs);
  if (Object.hasOwn(reply, 'details')) {
    const details = own(reply, 'details');
    const check = checkPlainData(details, { maxDepth: MAX_DATA_DEPTH, maxBytes: maxResultBytes }, 'details');
    if (!check.ok) return fail(`its details are not plain data: ${check.problem}`);
    parsed.details = details as JsonValue;
    size += check.bytes;
  }
  if (Object.hasOwn(reply, 'structuredContent')) {
    const structured = own(reply, 'structuredContent');
    if (record(structured) === undefined) return fail('its structuredContent is not a JSON object');
    const limit = { maxDepth: MAX_DATA_DEPTH, maxBytes: maxResultBytes };
    const check = checkPlainData(structured, limit, 'structuredContent');
    if (!check.ok) return fail(`its structuredContent is not plain data: ${check.problem}`);
    parsed.structuredContent = structured as JsonObject;
    size += check.bytes;
  }
  if (size > maxResultBytes) return fail(`it is ${size} bytes, over the ${maxResultBytes}-byte cap`);
  return { ok: true, value: parsed };
}

/** The reply's content blocks, each read afresh, or why one is not a block. */
function parseContent(value: unknown): ToolContentBlock[] | string {
  if (!Array.isArray(value)) return 'its content is not an array';
  const content: ToolContentBlock[] = [];
  for (const item of value) {
    const block = readContentBlock(item);
    if (typeof block === 'string') return `a content block is malformed: ${block}`;
    content.push(block);
  }
  return content;
}

/** A progress message's data: plain, at most {@link MAX_PROGRESS_BYTES}. */
export function parseProgressData(value: unknown): Parsed<JsonValue> {
  const check = checkPlainData(value, { maxDepth: MAX_DATA_DEPTH, maxBytes: MAX_PROGRESS_BYTES }, 'data');
  return check.ok ? { ok: true, value: value as JsonValue } : fail(check.problem);
}

/** The most of a tool's stack the host keeps. */
const MAX_STACK_LENGTH = 4000;

/** A worker's `stack` (the tool's frames): a bounded string of plain text, or none. */
function parseStack(value: unknown): string | undefined {
  return typeof value === 'string' && value !== ''
    ? safeMessage(value.slice(0, MAX_STACK_LENGTH), '')
    : undefined;
}

export type WorkerNote =
  | { type: 'hello'; threadId: number; osThreadId: number | null }
  | { type: 'progress'; taskId: string; data: unknown }
  | { type: 'log'; taskId: string; logs: unknown }
  | {
      type: 'fault';
      taskId: string | null;
      code: ToolErrorCode;
      message: string;
      stack: string | undefined;
      logs: CapturedLog[];
    };

/**
 * A message a call worker posted on `parentPort`. Progress data and forwarded logs are checked
 * separately (and only for a call that is still waiting for them). Anything else is not ours:
 * undefined.
 */
export function parseWorkerMessage(value: unknown, maxLogChars: number): WorkerNote | undefined {
  const message = record(value);
  if (message === undefined || own(message, 'tag') !== WORKER_MESSAGE_TAG) return undefined;
  const type = own(message, 'type');
  const taskId = own(message, 'taskId');
  if (type === 'hello') {
    const threadId = count(own(message, 'threadId'), Number.MAX_SAFE_INTEGER);
    const osThreadId = own(message, 'osThreadId');
    if (threadId === undefined) return undefined;
    return { type, threadId, osThreadId: count(osThreadId, 2 ** 31) ?? null };
  }
  if (type === 'progress') {
    return typeof taskId === 'string' ? { type, taskId, data: own(message, 'data') } : undefined;
  }
  if (type === 'log') {
    return typeof taskId === 'string' ? { type, taskId, logs: own(message, 'logs') } : undefined;
  }
  if (type !== 'fault' || (typeof taskId !== 'string' && taskId !== null)) return undefined;
  const error = record(own(message, 'error'));
  const code = error === undefined ? undefined : own(error, 'code');
  const logs = parseLogs(own(message, 'logs'), maxLogChars);
  return {
    type,
    taskId,
    code:
      typeof code === 'string' && FAULT_CODES.has(code as ToolErrorCode)
        ? (code as ToolErrorCode)
        : 'TOOL_CRASHED',
    message: safeMessage(error === undefined ? undefined : own(error, 'message'), 'the worker failed'),
    stack: parseStack(own(error, 'stack')),
    logs: logs.ok ? logs.value : [],
  };
}
