/**
 * The wire between the host and a package's process: length-prefixed frames, each one JSON value
 * (a 4-byte big-endian length, then that many bytes of UTF-8 JSON), written whole. How a frame is
 * read, and what a reader refuses, is frame-reader.ts's. JSON, not V8's serializer: what crosses
 * is plain data (the protocol's values are checked to be), and JSON.parse builds nothing but plain
 * values.
 */

import fs from 'node:fs';

/** Bytes of the length prefix. */
export const HEADER_BYTES = 4;

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
