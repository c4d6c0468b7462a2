/**
 * The wire between the host and a package's process: length-prefixed frames, each one JSON value
 * (a 4-byte big-endian length, then that many bytes of UTF-8 JSON). Node's own `ipc` channel is not
 * used: it buffers a message of any size before anyone sees it, so a child could make the host hold
 * gigabytes by never sending a newline. Here a frame that announces more than the cap ends the
 * channel before any of it is kept. JSON, not V8's serializer: what crosses is plain data (the
 * protocol's values are checked to be), and JSON.parse builds nothing but plain values.
 */

import fs from 'node:fs';

/** Bytes of the length prefix. */
const HEADER_BYTES = 4;

// Taken when this module loads: in a package's process, before any tool code could replace them.
const stringify = JSON.stringify;
// A value, not a live binding of `node:fs`: the call worker's capture and descriptor guard replace
// `fs.writeSync` for tools, and this writes the descriptor they refuse to tools.
const { writeSync } = fs;
const sleepCell = new Int32Array(new SharedArrayBuffer(4));
const { wait } = Atomics;

/** A frame for `value` (plain data; the sender's own messages). */
export function encodeFrame(value: unknown): Buffer {
  const body = Buffer.from(stringify(value), 'utf8');
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

/**
 * Writes `frame` whole to `fd` before returning (a package process's channel: where Node made it
 * non-blocking, a full socket buffer is waited out a millisecond at a time). Synchronous, so that
 * what a process writes just before it exits is out, and frames never interleave. Throws when the
 * channel is gone.
 */
export function writeFrameSync(fd: number, frame: Buffer): void {
  let offset = 0;
  while (offset < frame.length) {
    try {
      offset += writeSync(fd, frame, offset, frame.length - offset);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EAGAIN') throw error;
      wait(sleepCell, 0, 0, 1);
    }
  }
}

export type FrameResult = { ok: true; values: unknown[] } | { ok: false; reason: string };

/**
 * Cuts a byte stream into frames and parses each. Never throws: a frame over the cap, or one that is
 * not JSON, is a broken channel (`ok: false`), and nothing more is read after it.
 */
export class FrameReader {
  readonly #maxFrameBytes: number;
  #chunks: Buffer[] = [];
  #buffered = 0;
  #broken: string | undefined;

  constructor(maxFrameBytes: number) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  push(chunk: Buffer): FrameResult {
    if (this.#broken !== undefined) return { ok: false, reason: this.#broken };
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const values: unknown[] = [];
    while (this.#buffered >= HEADER_BYTES) {
      const length = this.#peekLength();
      if (length > this.#maxFrameBytes) {
        return this.#break(
          `it announced a message of ${length} bytes, over the ${this.#maxFrameBytes}-byte cap`,
        );
      }
      if (this.#buffered < HEADER_BYTES + length) break;
      const frame = this.#take(HEADER_BYTES + length);
      try {
        values.push(JSON.parse(frame.toString('utf8', HEADER_BYTES)));
      } catch {
        return this.#break('it sent a message that is not JSON');
      }
    }
    return { ok: true, values };
  }

  #break(reason: string): FrameResult {
    this.#broken = reason;
    this.#chunks = [];
    this.#buffered = 0;
    return { ok: false, reason };
  }

  #peekLength(): number {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= HEADER_BYTES) return first.readUInt32BE(0);
    return Buffer.concat(this.#chunks, HEADER_BYTES).readUInt32BE(0);
  }

  /** The first `bytes` bytes, removed from the buffer (joined once, not chunk by chunk). */
  #take(bytes: number): Buffer {
    const joined = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const frame = joined.subarray(0, bytes);
    const rest = joined.subarray(bytes);
    this.#chunks = rest.length === 0 ? [] : [rest];
    this.#buffered = rest.length;
    return frame;
  }
}
