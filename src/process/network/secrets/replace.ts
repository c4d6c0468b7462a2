/**
 * Finding and replacing secrets' placeholders and values in what crosses the proxy: in header
 * values and URLs (whole strings), and in bodies as they stream (a chunk boundary may split an
 * occurrence, so the last few bytes of each chunk wait for the next). Each needle is found where it
 * starts first (the longest where two start together); what replaces it is not searched again.
 */
import { randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** What is looked for, what it becomes (or undefined: only noticed), and whose it is. */
export interface Needle {
  find: string;
  replace: string | undefined;
  /** The secret it belongs to. */
  name: string;
}

/** An unguessable placeholder (192 random bits), the same length and alphabet every time. */
export function makePlaceholder(): string {
  return `toolhost-secret-${randomBytes(24).toString('base64url')}`;
}

/** `text` with each needle replaced; `found` hears the secret of each needle seen. */
export function replaceInText(
  text: string,
  needles: readonly Needle[],
  found?: (name: string) => void,
): string {
  if (needles.length === 0) return text;
  let out = '';
  let at = 0;
  for (;;) {
    const next = earliest(needles, (needle) => text.indexOf(needle.find, at));
    if (next === undefined) break;
    found?.(next.needle.name);
    out += text.slice(at, next.index) + (next.needle.replace ?? next.needle.find);
    at = next.index + next.needle.find.length;
  }
  return out + text.slice(at);
}

/** A stream that replaces needles in bytes as they pass (UTF-8 needles, any bytes around them). */
export class ReplacingStream extends Transform {
  readonly #needles: Array<{ find: Buffer; replace: Buffer | undefined; name: string }>;
  readonly #found: ((name: string) => void) | undefined;
  readonly #keep: number;
  /** Only noticing: bytes pass unchanged and at once. */
  readonly #noticeOnly: boolean;
  #tail = Buffer.alloc(0);

  constructor(needles: readonly Needle[], found?: (name: string) => void) {
    super();
    this.#needles = needles.map((needle) => ({
      find: Buffer.from(needle.find, 'utf8'),
      replace: needle.replace === undefined ? undefined : Buffer.from(needle.replace, 'utf8'),
      name: needle.name,
    }));
    this.#found = found;
    this.#keep = Math.max(0, ...this.#needles.map((needle) => needle.find.length - 1));
    this.#noticeOnly = this.#needles.every((needle) => needle.replace === undefined);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const held = this.#tail.length;
    const bytes = held === 0 ? chunk : Buffer.concat([this.#tail, chunk]);
    if (this.#noticeOnly) {
      // Nothing changes: the chunk goes on at once, and only its end is kept to be searched again.
      this.#search(bytes);
      this.#tail = Buffer.from(bytes.subarray(this.#partialFrom(bytes, 0)));
      callback(null, chunk);
      return;
    }
    const { parts, at } = this.#search(bytes);
    // Only an end of the bytes that begins a needle waits for the next chunk: a stream of events
    // (SSE) is not held back by a search that could not match.
    const from = this.#partialFrom(bytes, at);
    parts.push(bytes.subarray(at, from));
    this.#tail = Buffer.from(bytes.subarray(from));
    const out = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    callback(null, out.length === 0 ? undefined : out);
  }

  override _flush(callback: TransformCallback): void {
    callback(null, this.#tail.length === 0 || this.#noticeOnly ? undefined : this.#tail);
  }

  /** Every whole needle in `bytes`, replaced (what comes before each, and its replacement). */
  #search(bytes: Buffer): { parts: Buffer[]; at: number } {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const next = earliest(this.#needles, (needle) => bytes.indexOf(needle.find, at));
      if (next === undefined) break;
      this.#found?.(next.needle.name);
      parts.push(bytes.subarray(at, next.index), next.needle.replace ?? next.needle.find);
      at = next.index + next.needle.find.length;
    }
    return { parts, at };
  }

  /** Where the shortest end of `bytes` (from `at` on) that is the start of a needle begins. */
  #partialFrom(bytes: Buffer, at: number): number {
    for (let from = Math.max(at, bytes.length - this.#keep); from < bytes.length; from += 1) {
      const rest = bytes.subarray(from);
      if (this.#needles.some((needle) => needle.find.subarray(0, rest.length).equals(rest))) return from;
    }
    return bytes.length;
  }
}

function earliest<T extends { find: { length: number } }>(
  needles: readonly T[],
  indexOf: (needle: T) => number,
): { index: number; needle: T } | undefined {
  let best: { index: number; needle: T } | undefined;
  for (const needle of needles) {
    if (needle.find.length === 0) continue;
    const index = indexOf(needle);
    if (index < 0) continue;
    if (
      best === undefined ||
      index < best.index ||
      (index === best.index && needle.find.length > best.needle.find.length)
    )
      best = { index, needle };
  }
  return best;
}
