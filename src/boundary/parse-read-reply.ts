/**
 * The host's parse of what a declaration reader posts. The module being read runs in that worker
 * and may have posted the message itself: every field is checked (shape, states, plain and bounded
 * values) and a fresh {@link RawDeclaration} is built; anything else is a malformed reply.
 */
import { checkPlainData, MAX_DATA_DEPTH } from './plain-data.js';
import {
  DECLARATION_FIELDS,
  type FieldRead,
  MAX_FIELD_BYTES,
  MISNAMED_SCHEMA_FIELDS,
  type RawDeclaration,
  type ReadError,
  type ReadReply,
} from './protocol.js';
import { escapeControl, safeMessage } from './sanitize.js';
import { type Data, own, record } from './untrusted.js';

/** A `file:line:column` the reader reports: one short line, or none. */
/** A `file:line:column` a worker reports, or undefined when it is not one (bounded, escaped). */
export function parseLocation(value: unknown): string | undefined {
  return typeof value === 'string' && /^[^\n]{1,1000}:\d{1,9}:\d{1,9}$/.test(value)
    ? escapeControl(value)
    : undefined;
}

function parseField(value: unknown, field: string): FieldRead | undefined {
  const read = record(value);
  if (read === undefined) return undefined;
  const state = own(read, 'state');
  if (state === 'missing') return { state };
  if (state === 'not-plain') return { state, message: safeMessage(own(read, 'message'), 'no message') };
  if (state === 'threw') {
    const location = parseLocation(own(read, 'location'));
    const message = safeMessage(own(read, 'message'), 'no message');
    return location === undefined ? { state, message } : { state, message, location };
  }
  if (state !== 'value') return undefined;
  const fieldValue = own(read, 'value');
  const check = checkPlainData(fieldValue, { maxDepth: MAX_DATA_DEPTH, maxBytes: MAX_FIELD_BYTES }, field);
  if (!check.ok) return { state: 'not-plain', message: check.problem };
  return { state: 'value', value: fieldValue as never };
}

/** A reader's reply, or why it is not one. */
export function parseReadReply(
  value: unknown,
): { ok: true; reply: ReadReply } | { ok: false; reason: string } {
  const reply = record(value);
  if (reply === undefined) return { ok: false, reason: 'the reply is not an object' };
  const ok = own(reply, 'ok');
  if (ok === false) {
    const error = record(own(reply, 'error'));
    const code = error === undefined ? undefined : own(error, 'code');
    if (code !== 'IMPORT_FAILED' && code !== 'DECLARATION_THREW') {
      return { ok: false, reason: 'its error has no known code' };
    }
    const message = safeMessage(own(error as Data, 'message'), 'no message');
    const location = parseLocation(own(error, 'location'));
    const parsed: ReadError = { code, message };
    if (location !== undefined) parsed.location = location;
    if (own(error, 'syntaxError') === true) parsed.syntaxError = true;
    return { ok: true, reply: { ok: false, error: parsed } };
  }
  if (ok !== true) return { ok: false, reason: 'its ok flag is not a boolean' };
  const raw = record(own(reply, 'declaration'));
  if (raw === undefined) return { ok: false, reason: 'it has no declaration' };
  const hasRun = own(raw, 'hasRun');
  const hasSelftest = own(raw, 'hasSelftest');
  if (typeof hasRun !== 'boolean' || typeof hasSelftest !== 'boolean') {
    return { ok: false, reason: 'its hasRun or hasSelftest is not a boolean' };
  }
  const misnamed = own(raw, 'misnamedSchema');
  if (misnamed !== null && !(MISNAMED_SCHEMA_FIELDS as readonly unknown[]).includes(misnamed)) {
    return { ok: false, reason: 'its misnamedSchema is not a known field name' };
  }
  const fields: Partial<Record<(typeof DECLARATION_FIELDS)[number], FieldRead>> = {};
  for (const field of DECLARATION_FIELDS) {
    const read = parseField(own(raw, field), field);
    if (read === undefined) return { ok: false, reason: `its ${field} field is malformed` };
    fields[field] = read;
  }
  const declaration = { ...fields, misnamedSchema: misnamed, hasRun, hasSelftest } as RawDeclaration;
  return { ok: true, reply: { ok: true, declaration } };
}
