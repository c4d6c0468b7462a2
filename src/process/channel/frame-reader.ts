/**
 * Reading the frames of frames.ts from a byte stream, as it arrives, with the reader's bounds: a
 * frame that announces more than the cap ends the channel before any of it is kept (Node's own
 * `ipc` channel is not used: it buffers a message of any size before anyone sees it, so a child
 * could make the host hold gigabytes by never sending a newline). What a frame costs the reader is
 * bounded too, not only its bytes:
 * - A frame that is not complete yet is held in one buffer, as large as the frame announces (never
 *   more than the cap): a sender that writes it a byte at a time costs its bytes, not an object per
 *   read (about 470 bytes each when every read was kept as a `Buffer` of its own).
 * - A frame whose JSON holds more values than the reader allows (counted as its `,`, `[` and `{`
 *   outside strings, in one pass over its bytes, before anything parses it) ends the channel: 61 MB
 *   of `[{},{},…]` took JSON.parse 25–38 s and 2.4 GB on the host.
 */
import { HEADER_BYTES } from './frames.js';

/** The values a chunk completed, and each one's size in bytes (its frame's body). */
export type FrameResult = { ok: true; values: unknown[]; sizes: number[] } | { ok: false; reason: string };

/** The buffer a reader keeps for a partial frame, until one needs more (and again after it). */
const SMALL_BUFFER_BYTES = 64 * 1024;
/** Frames up to this many bytes hold too few values to matter: they are not counted. */
const UNCOUNTED_FRAME_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;

/**
 * Whether the JSON text in `bytes[start, end)` holds more than `limit` values (about): a text of up
 * to 64 KiB is not counted, it holds too few to matter.
 */
export function holdsMoreValues(bytes: Buffer, start: number, end: number, limit: number): boolean {
  if (end - start <= UNCOUNTED_FRAME_BYTES) return false;
  let count = 0;
  let inString = false;
  for (let index = start; index < end; index++) {
    const byte = bytes[index];
    if (inString) {
      if (byte === BACKSLASH) index++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === COMMA || byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      count++;
      if (count > limit) return true;
    }
  }
  return false;
}

export interface FrameBounds {
  /** The most bytes a frame may announce. */
  maxFrameBytes: number;
  /** The most values a frame's JSON may hold. @default no bound */
  maxFrameValues?: number;
}

/**
 * Cuts a byte stream into frames and parses each. Never throws: a frame over a bound, or one that
 * is not JSON, is a broken channel (`ok: false`), and nothing more is read after it.
 */
export class FrameReader {
  readonly #maxFrameBytes: number;
  readonly #maxFrameValues: number;
  /** What is held of frames not complete yet: `#buffer[0, #held)`. */
  #buffer = Buffer.allocUnsafe(0);
  #held = 0;
  #broken: string | undefined;

  constructor(bounds: FrameBounds) {
    this.#maxFrameBytes = bounds.maxFrameBytes;
    this.#maxFrameValues = bounds.maxFrameValues ?? Number.POSITIVE_INFINITY;
  }

  push(chunk: Buffer): FrameResult {
    if (this.#broken !== undefined) return { ok: false, reason: this.#broken };
    // Nothing held: the frames are read from the chunk itself, and only its rest is kept.
    const bytes = this.#held === 0 ? chunk : this.#append(chunk);
    const end = this.#held === 0 ? chunk.length : this.#held;
    const values: unknown[] = [];
    const sizes: number[] = [];
    let offset = 0;
    while (end - offset >= HEADER_BYTES) {
      const length = bytes.readUInt32BE(offset);
      if (length > this.#maxFrameBytes) {
        return this.#break(
          `it announced a message of ${length} bytes, over the ${this.#maxFrameBytes}-byte cap`,
        );
      }
      const bodyStart = offset + HEADER_BYTES;
      if (end - bodyStart < length) break;
      const bodyEnd = bodyStart + length;
      if (holdsMoreValues(bytes, bodyStart, bodyEnd, this.#maxFrameValues)) {
        return this.#break(`it sent a message of more than ${this.#maxFrameValues} values`);
      }
      try {
        values.push(JSON.parse(bytes.toString('utf8', bodyStart, bodyEnd)));
        sizes.push(length);
      } catch {
        return this.#break('it sent a message that is not JSON');
      }
      offset = bodyEnd;
    }
    this.#keep(bytes, offset, end);
    return { ok: true, values, sizes };
  }

  /** Appends `chunk` to what is held; the buffer grows to the frame it holds (at most the cap). */
  #append(chunk: Buffer): Buffer {
    const needed = this.#held + chunk.length;
    if (needed > this.#buffer.length) {
      // The header is in what is held, or (nothing held) at the start of the chunk.
      const header = this.#held >= HEADER_BYTES ? this.#buffer : this.#held === 0 ? chunk : undefined;
      const announced =
        header !== undefined && header.length >= HEADER_BYTES
          ? HEADER_BYTES + header.readUInt32BE(0)
          : SMALL_BUFFER_BYTES;
      // The frame being held, whole (a chunk that ends it and starts the next may need more); one
      // over the cap is refused as soon as its header is read, so it gets no room of its own.
      const frame = announced <= HEADER_BYTES + this.#maxFrameBytes ? announced : 0;
      const grown = Buffer.allocUnsafe(Math.max(needed, frame));
      this.#buffer.copy(grown, 0, 0, this.#held);
      this.#buffer = grown;
    }
    chunk.copy(this.#buffer, this.#held);
    this.#held = needed;
    return this.#buffer;
  }

  /** Keeps `bytes[offset, end)`, the start of a frame not complete yet, at the front of the buffer. */
  #keep(bytes: Buffer, offset: number, end: number): void {
    const rest = end - offset;
    if (rest === 0) {
      this.#held = 0;
      // A large frame's buffer goes with it.
      if (this.#buffer.length > SMALL_BUFFER_BYTES) this.#buffer = Buffer.allocUnsafe(0);
      return;
    }
    if (bytes === this.#buffer) {
      if (offset > 0) this.#buffer.copyWithin(0, offset, end);
      this.#held = rest;
      return;
    }
    this.#held = 0;
    this.#append(bytes.subarray(offset, end));
  }

  #break(reason: string): FrameResult {
    this.#broken = reason;
    this.#buffer = Buffer.allocUnsafe(0);
    this.#held = 0;
    return { ok: false, reason };
  }
}
