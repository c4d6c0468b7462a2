/**
 * Turns whatever a tool returned into content for the model. Used inside call workers (for loaded,
 * untrusted tools, so nothing unsafe crosses to the host) and in the host (for its own in-process
 * tools), so both follow one encoding. Depends only on `node:util` and the contract types.
 */
import { inspect, types } from 'node:util';
import type { ToolErrorCode } from './errors.js';
import {
  type ImageMediaType,
  isTaggedResult,
  type JsonValue,
  type ToolContentBlock,
  text,
} from './tool-module.js';

export type EncodedResult =
  | { ok: true; content: ToolContentBlock[]; isError: boolean; details?: JsonValue; cutBytes: number }
  | { ok: false; error: { code: ToolErrorCode; message: string } };

const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set<ImageMediaType>([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);

/** Encodes a tool's return value, cutting text over `maxResultBytes` (head + tail, UTF-8 safe). */
export function encodeResult(value: unknown, maxResultBytes: number): EncodedResult {
  if (typeof value === 'string') return encoded([text(value)], false, undefined, maxResultBytes);
  if (value === undefined) return encoded([], false, undefined, maxResultBytes);
  if (isTaggedResult(value)) return encodeTagged(value, maxResultBytes);

  const unsafe = findUnclonable(value);
  if (unsafe !== undefined) return badResult(`the tool returned ${unsafe}, which can't be sent to the model`);
  return encoded([text(stringify(value))], false, undefined, maxResultBytes);
}

function encodeTagged(value: object, maxResultBytes: number): EncodedResult {
  const { content, isError, details } = value as Record<string, unknown>;
  if (!Array.isArray(content)) return badResult('a tagged result needs a `content` array');
  const blocks: ToolContentBlock[] = [];
  for (const block of content as unknown[]) {
    const checked = checkBlock(block);
    if (typeof checked === 'string') return badResult(checked);
    blocks.push(checked);
  }
  if (isError !== undefined && typeof isError !== 'boolean') {
    return badResult('a tagged result has a non-boolean `isError`');
  }
  if (details !== undefined) {
    const problem = findNonJson(details);
    if (problem !== undefined) return badResult(`the result's details are not plain data: ${problem}`);
  }
  return encoded(blocks, isError === true, details as JsonValue | undefined, maxResultBytes);
}

function checkBlock(block: unknown): ToolContentBlock | string {
  if (typeof block !== 'object' || block === null) return 'a content block is not an object';
  const { type } = block as Record<string, unknown>;
  if (type === 'text') {
    const value = (block as Record<string, unknown>)['text'];
    return typeof value === 'string' ? text(value) : 'a text block has no string `text`';
  }
  if (type === 'image') {
    const source = (block as Record<string, unknown>)['source'];
    if (typeof source !== 'object' || source === null) return 'an image block has no `source`';
    const { data, media_type: mediaType } = source as Record<string, unknown>;
    if (typeof data !== 'string' || typeof mediaType !== 'string' || !IMAGE_MEDIA_TYPES.has(mediaType)) {
      return 'an image block needs base64 `data` and a PNG, JPEG, GIF or WebP `media_type`';
    }
    return { type: 'image', source: { type: 'base64', media_type: mediaType as ImageMediaType, data } };
  }
  return `a content block has an unknown type ${JSON.stringify(String(type))}`;
}

function encoded(
  content: ToolContentBlock[],
  isError: boolean,
  details: JsonValue | undefined,
  maxResultBytes: number,
): EncodedResult {
  let cutBytes = 0;
  let imageBytes = 0;
  const kept = content.map((block) => {
    if (block.type === 'image') {
      imageBytes += block.source.data.length;
      return block;
    }
    const cut = cutHeadTail(block.text, maxResultBytes);
    cutBytes += cut.omittedBytes;
    return cut.omittedBytes === 0 ? block : text(cut.text);
  });
  if (imageBytes > maxResultBytes) {
    return badResult(`the tool returned ${imageBytes} bytes of images, over the ${maxResultBytes}-byte cap`);
  }
  const result: EncodedResult = { ok: true, content: kept, isError, cutBytes };
  if (details !== undefined) result.details = details;
  return result;
}

function badResult(message: string): EncodedResult {
  return { ok: false, error: { code: 'TOOL_BAD_RESULT', message } };
}

/** JSON when it can be; `util.inspect` when JSON fails (a BigInt, a cycle). */
function stringify(value: unknown): string {
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch {
    // Falls through to inspect: BigInt and cyclic values are still worth showing to the model.
  }
  return inspect(value, { depth: 8, maxArrayLength: 1000, maxStringLength: 100_000, breakLength: Infinity });
}

/** Names the first function, symbol or Proxy inside `value`, or undefined when there is none. */
function findUnclonable(value: unknown): string | undefined {
  const seen = new Set<object>();
  const visit = (current: unknown, depth: number): string | undefined => {
    if (typeof current === 'function') return 'a function';
    if (typeof current === 'symbol') return 'a symbol';
    if (typeof current !== 'object' || current === null) return undefined;
    if (types.isProxy(current)) return 'a Proxy';
    if (seen.has(current) || depth > 64) return undefined;
    seen.add(current);
    for (const key of Reflect.ownKeys(current)) {
      if (typeof key === 'symbol') continue;
      const descriptor = Object.getOwnPropertyDescriptor(current, key);
      if (descriptor === undefined || !('value' in descriptor)) continue;
      const found = visit(descriptor.value, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(value, 0);
}

/**
 * Why `value` is not plain JSON data (a path and what was found there), or undefined when it is.
 * Plain means: null, booleans, finite numbers, strings, arrays and objects whose prototype is
 * `Object.prototype` or null; no accessors, proxies, symbols or cycles.
 */
export function findNonJson(value: unknown, path = '$'): string | undefined {
  const onPath = new Set<object>();
  const visit = (current: unknown, at: string): string | undefined => {
    if (current === null || typeof current === 'string' || typeof current === 'boolean') return undefined;
    if (typeof current === 'number') return Number.isFinite(current) ? undefined : `${at} is ${current}`;
    if (typeof current !== 'object') return `${at} is a ${typeof current}`;
    if (types.isProxy(current)) return `${at} is a Proxy`;
    if (onPath.has(current)) return `${at} is a cycle`;
    const isArray = Array.isArray(current);
    const prototype = Object.getPrototypeOf(current);
    if (!isArray && prototype !== Object.prototype && prototype !== null) {
      return `${at} is an instance of ${prototype?.constructor?.name ?? 'a class'}`;
    }
    onPath.add(current);
    for (const key of Reflect.ownKeys(current)) {
      if (typeof key === 'symbol') return `${at} has a symbol key`;
      if (isArray && key === 'length') continue;
      const descriptor = Object.getOwnPropertyDescriptor(current, key);
      if (descriptor === undefined) continue;
      if (!('value' in descriptor)) return `${at}.${key} is a getter`;
      const found = visit(descriptor.value, isArray ? `${at}[${key}]` : `${at}.${key}`);
      if (found !== undefined) return found;
    }
    onPath.delete(current);
    return undefined;
  };
  return visit(value, path);
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
