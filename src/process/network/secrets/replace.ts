/**
 * Finding and replacing secrets' placeholders and values in what crosses the proxy: in header
 * values and URLs (whole strings), and in bodies as they stream (a chunk boundary may split an
 * occurrence, so the last few bytes of each chunk wait for the next). Each needle is found where it
 * starts first (the longest where two start together); what replaces it is not searched again.
 */
import { randomBytes } from 'node:crypto';

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

type EncodedNeedle = { find: Buffer; replace: Buffer | undefined; name: string };

/** Needles as bytes, made once per list (a list kept for many bodies is encoded once). */
const encodings = new WeakMap<readonly Needle[], EncodedNeedle[]>();

/**
 * Replaces needles in bytes that arrive in chunks (UTF-8 needles, any bytes around them), without a
 * stream of its own: what a chunk can give on at once comes back from {@link push}, and only an end
 * of it that begins a needle waits for the next chunk (so a stream of events, SSE, is not held back
 * by a search that could not match). Only noticing (no needle replaces): every chunk goes on as it
 * came, at once, and only its end is kept to be searched again with the next.
 */
export class ChunkReplacer {
  readonly #needles: readonly EncodedNeedle[];
  readonly #found: ((name: string) => void) | undefined;
  /** The longest end of a chunk that can begin a needle: one byte short of the longest needle. */
  readonly #keep: number;
  readonly noticeOnly: boolean;
  #tail: Buffer = Buffer.alloc(0);

  constructor(needles: readonly Needle[], found?: (name: string) => void) {
    let encoded = encodings.get(needles);
    if (encoded === undefined) {
      encoded = needles
        .filter((needle) => needle.find.length > 0)
        .map((needle) => ({
          find: Buffer.from(needle.find, 'utf8'),
          replace: needle.replace === undefined ? undefined : Buffer.from(needle.replace, 'utf8'),
          name: needle.name,
        }));
      encodings.set(needles, encoded);
    }
    this.#needles = encoded;
    this.#found = found;
    this.#keep = Math.max(0, ...encoded.map((needle) => needle.find.length - 1));
    this.noticeOnly = encoded.every((needle) => needle.replace === undefined);
  }

  /** What of `chunk` (after what was held) goes on now. */
  push(chunk: Buffer): Buffer {
    if (this.#needles.length === 0) return chunk;
    const bytes = this.#tail.length === 0 ? chunk : Buffer.concat([this.#tail, chunk]);
    const { parts, at, held } = this.#search(bytes);
    this.#tail = held === bytes.length ? EMPTY : Buffer.from(bytes.subarray(held));
    if (this.noticeOnly) return chunk;
    if (parts.length === 0) return held === bytes.length ? bytes : bytes.subarray(0, held);
    parts.push(bytes.subarray(at, held));
    return Buffer.concat(parts);
  }

  /** What was held, at the end of the bytes (nothing when only noticing: it went on already). */
  end(): Buffer {
    const tail = this.#tail;
    this.#tail = EMPTY;
    if (tail.length === 0) return EMPTY;
    // Nothing more comes: every needle left in what was held is whole.
    const { parts, at } = this.#search(tail, true);
    if (this.noticeOnly || parts.length === 0) return this.noticeOnly ? EMPTY : tail;
    parts.push(tail.subarray(at));
    return Buffer.concat(parts);
  }

  /**
   * Every needle in `bytes` that is sure to be one (what comes before each, and its replacement),
   * and from where the bytes must wait for the next chunk: an end that begins a needle, and any match
   * at or after it (a longer needle, or one that starts earlier, may still complete there), so the
   * outcome is the same however the bytes were split. The `last` bytes wait for nothing.
   */
  #search(bytes: Buffer, last = false): { parts: Buffer[]; at: number; held: number } {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const held = last ? bytes.length : this.#partialFrom(bytes, at);
      const next = earliest(this.#needles, (needle) => bytes.indexOf(needle.find, at));
      if (next === undefined || next.index >= held) return { parts, at, held };
      this.#found?.(next.needle.name);
      parts.push(bytes.subarray(at, next.index), next.needle.replace ?? next.needle.find);
      at = next.index + next.needle.find.length;
    }
  }

  /** Where the longest end of `bytes` (from `at` on) that is the start of a needle begins. */
  #partialFrom(bytes: Buffer, at: number): number {
    for (let from = Math.max(at, bytes.length - this.#keep); from < bytes.length; from += 1) {
      const rest = bytes.length - from;
      for (const { find } of this.#needles) {
        // Compared in place: no copy of the end per position and needle.
        if (
          find.length > rest &&
          find[0] === bytes[from] &&
          find.compare(bytes, from, bytes.length, 0, rest) === 0
        )
          return from;
      }
    }
    return bytes.length;
  }
}

const EMPTY = Buffer.alloc(0);

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
