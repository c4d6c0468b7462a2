/**
 * Turns whatever a tool returned into content for the model. Used inside call workers (for loaded,
 * untrusted tools, so nothing unsafe or oversized crosses to the host) and in the host (for its own
 * in-process tools), so both follow one encoding. Everything it reads of a tool's value may run tool
 * code (getters, `toJSON`, custom inspection): it never throws, and what it calls of its own was taken
 * when it loaded, before any tool code ran.
 */
import { createRequire } from 'node:module';
import {
  isTaggedResult,
  type JsonObject,
  type JsonValue,
  type ToolContentBlock,
  text,
} from '../tool-module.js';
import { readContentBlock } from './content-blocks.js';
import type { ToolErrorCode } from './errors.js';
import { scanForJson } from './json-scan.js';
import { checkPlainData, MAX_DATA_DEPTH } from './plain-data.js';
import type { EncodedContent } from './protocol.js';
import { blockBytes, ENTRY_OVERHEAD_BYTES, shareTextBudget } from './reply-size.js';

// Required rather than imported: on Node 26 an ESM import of `node:util` evaluates all of its lazy
// exports, whose colour support reads `process.stderr` (and so loads Node's socket stack) in every
// process and worker that imports this file.
const { inspect } = createRequire(import.meta.url)('node:util') as typeof import('node:util');

const stringifyJson = JSON.stringify;
const byteLength = Buffer.byteLength;

export type EncodedResult = EncodedContent | { ok: false; error: { code: ToolErrorCode; message: string } };

/** What a result holds beside its content blocks: counted in the budget, never cut. */
interface Extras {
  details?: JsonValue;
  structuredContent?: JsonObject;
  bytes: number;
}

const NO_EXTRAS: Extras = { bytes: 0 };

/** Room kept for the marker a cut text gets (its byte count and wording). */
const MARKER_ROOM_BYTES = 64;

/**
 * Encodes a tool's return value. `budgetBytes` caps everything the result holds (text, images,
 * details): text over it is cut head + tail, UTF-8 safe; images and details over it fail the result.
 */
export function encodeResult(value: unknown, budgetBytes: number): EncodedResult {
  try {
    if (typeof value === 'string') return encoded([text(value)], false, NO_EXTRAS, budgetBytes);
    if (value === undefined) return encoded([], false, NO_EXTRAS, budgetBytes);
    if (isTaggedResult(value)) return encodeTagged(value, budgetBytes);
    // What is over the budget is cut from the JSON's middle: a value up to twice it is written and
    // cut, a larger one is refused before it is written (see json-scan.ts).
    const maxJsonBytes = 2 * budgetBytes + MARKER_ROOM_BYTES;
    const scan = scanForJson(value, maxJsonBytes);
    if (scan !== undefined && 'unsafe' in scan)
      return badResult(`the tool returned ${scan.unsafe}, which can't be sent to the model`);
    if (scan !== undefined) {
      return badResult(
        `the tool returned a value of more than ${maxJsonBytes} bytes as JSON, over twice the ${budgetBytes}-byte cap (a string is cut to fit instead)`,
      );
    }
    return encoded([text(stringify(value))], false, NO_EXTRAS, budgetBytes);
  } catch (error) {
    return badResult(`the tool's result could not be read: ${describe(error)}`);
  }
}

function encodeTagged(value: object, budgetBytes: number): EncodedResult {
  const { content, isError, details, structuredContent } = value as Record<string, unknown>;
  if (!Array.isArray(content)) return badResult('a tagged result needs a `content` array');
  const blocks: ToolContentBlock[] = [];
  for (const block of content as unknown[]) {
    const checked = readContentBlock(block);
    if (typeof checked === 'string') return badResult(checked);
    blocks.push(checked);
  }
  if (isError !== undefined && typeof isError !== 'boolean') {
    return badResult('a tagged result has a non-boolean `isError`');
  }
  const extras: Extras = { bytes: 0 };
  if (details !== undefined) {
    const check = checkPlainData(details, { maxDepth: MAX_DATA_DEPTH, maxBytes: budgetBytes }, 'details');
    if (!check.ok) return badResult(`the result's details are not plain data: ${check.problem}`);
    extras.details = details as JsonValue;
    extras.bytes += check.bytes;
  }
  if (structuredContent !== undefined) {
    if (
      typeof structuredContent !== 'object' ||
      structuredContent === null ||
      Array.isArray(structuredContent)
    ) {
      return badResult("a tagged result's `structuredContent` is not a JSON object");
    }
    const limit = { maxDepth: MAX_DATA_DEPTH, maxBytes: budgetBytes };
    const check = checkPlainData(structuredContent, limit, 'structuredContent');
    if (!check.ok) return badResult(`the result's structuredContent is not plain data: ${check.problem}`);
    extras.structuredContent = structuredContent as JsonObject;
    extras.bytes += check.bytes;
  }
  return encoded(blocks, isError === true, extras, budgetBytes);
}

function encoded(
  content: ToolContentBlock[],
  isError: boolean,
  extras: Extras,
  budgetBytes: number,
): EncodedResult {
  let fixedBytes = extras.bytes;
  let textAtMost = 0;
  for (const block of content) {
    fixedBytes += ENTRY_OVERHEAD_BYTES;
    if (block.type === 'text') textAtMost += block.text.length * 3;
    else fixedBytes += blockBytes(block);
  }
  if (fixedBytes > budgetBytes) {
    return badResult(
      `the tool returned ${fixedBytes} bytes of media, resources and details, over the ${budgetBytes}-byte cap`,
    );
  }
  const room = budgetBytes - fixedBytes;
  // Most results are far below the budget: three bytes per UTF-16 unit is the most they can take.
  if (textAtMost <= room) return withExtras({ ok: true, content, isError, cutBytes: 0 }, extras);
  const texts = content.filter((block) => block.type === 'text');
  const limits = shareTextBudget(
    texts.map((block) => byteLength(block.text)),
    room,
  );
  let cutBytes = 0;
  let textIndex = 0;
  const kept = content.map((block) => {
    if (block.type !== 'text') return block;
    const limit = limits[textIndex++] ?? Number.POSITIVE_INFINITY;
    if (limit === Number.POSITIVE_INFINITY) return block;
    const cut = cutHeadTail(block.text, Math.max(0, limit - MARKER_ROOM_BYTES));
    cutBytes += cut.omittedBytes;
    return text(cut.text);
  });
  return withExtras({ ok: true, content: kept, isError, cutBytes }, extras);
}

function withExtras(result: EncodedResult & { ok: true }, extras: Extras): EncodedResult {
  if (extras.details !== undefined) result.details = extras.details;
  if (extras.structuredContent !== undefined) result.structuredContent = extras.structuredContent;
  return result;
}

function badResult(message: string): EncodedResult {
  return { ok: false, error: { code: 'TOOL_BAD_RESULT', message } };
}

function describe(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an unreadable error';
  }
}

/** JSON when it can be; `util.inspect` when JSON fails (a BigInt, a cycle). */
function stringify(value: unknown): string {
  try {
    const json = stringifyJson(value);
    if (typeof json === 'string') return json;
  } catch {
    // Falls through to inspect: BigInt and cyclic values are still worth showing to the model.
  }
  return inspect(value, { depth: 8, maxArrayLength: 1000, maxStringLength: 100_000, breakLength: Infinity });
}

/** The marker put where output was cut. */
export function cutMarker(omittedBytes: number, fullOutputPath?: string): string {
  const where = fullOutputPath === undefined ? '' : `; full output: ${fullOutputPath}`;
  return `\n\n[... ${omittedBytes} bytes cut by toolhost${where} ...]\n\n`;
}

/**
 * Keeps the first and last `maxBytes / 2` UTF-8 bytes of `value` with a marker between them. Cuts
 * fall between characters (never inside a surrogate pair), so the result is valid UTF-8.
 */
export function cutHeadTail(
  value: string,
  maxBytes: number,
  fullOutputPath?: string,
): { text: string; omittedBytes: number } {
  // Cheap exits first: most outputs are far below the budget and never need a byte count.
  if (value.length * 3 <= maxBytes) return { text: value, omittedBytes: 0 };
  const totalBytes = Buffer.byteLength(value, 'utf8');
  if (totalBytes <= maxBytes) return { text: value, omittedBytes: 0 };

  const half = Math.floor(maxBytes / 2);
  if (totalBytes === value.length) {
    // Every character is one byte (ASCII): cut by index, no walk needed.
    const omittedBytes = totalBytes - 2 * half;
    return {
      text: value.slice(0, half) + cutMarker(omittedBytes, fullOutputPath) + value.slice(value.length - half),
      omittedBytes,
    };
  }
  let headEnd = 0;
  let headBytes = 0;
  while (headEnd < value.length) {
    const size = charSize(value, headEnd);
    if (headBytes + size.bytes > half) break;
    headBytes += size.bytes;
    headEnd += size.units;
  }
  let tailStart = value.length;
  let tailBytes = 0;
  while (tailStart > headEnd) {
    const size = charSizeBefore(value, tailStart);
    if (tailBytes + size.bytes > half) break;
    tailBytes += size.bytes;
    tailStart -= size.units;
  }
  const omittedBytes = totalBytes - headBytes - tailBytes;
  return {
    text: value.slice(0, headEnd) + cutMarker(omittedBytes, fullOutputPath) + value.slice(tailStart),
    omittedBytes,
  };
}

function charSize(value: string, index: number): { bytes: number; units: number } {
  const code = value.charCodeAt(index);
  if (code < 0x80) return { bytes: 1, units: 1 };
  if (code < 0x800) return { bytes: 2, units: 1 };
  if (code >= 0xd800 && code <= 0xdbff && index + 1 < value.length) {
    const next = value.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return { bytes: 4, units: 2 };
  }
  return { bytes: 3, units: 1 };
}

function charSizeBefore(value: string, end: number): { bytes: number; units: number } {
  const code = value.charCodeAt(end - 1);
  if (code >= 0xdc00 && code <= 0xdfff && end - 2 >= 0) {
    const previous = value.charCodeAt(end - 2);
    if (previous >= 0xd800 && previous <= 0xdbff) return { bytes: 4, units: 2 };
  }
  return charSize(value, end - 1);
}
