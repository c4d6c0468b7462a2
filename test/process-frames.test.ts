/**
 * The frames between the host and a package process, as a reader cuts them from a byte stream:
 * the same messages however the stream is split into reads (a byte at a time included), and a
 * frame over a bound (its announced size, the values its JSON holds) ends the channel before it is
 * parsed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameReader } from '../dist/src/process/channel/frame-reader.js';
import { encodeFrame } from '../dist/src/process/channel/frames.js';

/** Pushes `chunks` in order; what the reader handed over, or why it broke. */
function readAll(
  reader: FrameReader,
  chunks: Buffer[],
  sizes: number[] = [],
): { values: unknown[]; broke?: string } {
  const values: unknown[] = [];
  for (const chunk of chunks) {
    const result = reader.push(chunk);
    if (!result.ok) return { values, broke: result.reason };
    values.push(...result.values);
    sizes.push(...result.sizes);
  }
  return { values };
}

/** `bytes` cut at `cuts` (offsets, in any order). */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    if (point > start) chunks.push(bytes.subarray(start, point));
    start = Math.max(start, point);
  }
  return chunks;
}

describe('a frame reader', () => {
  it('hands over the same messages, with their sizes, however the stream is split into reads', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (messages, cuts) => {
          const frames = messages.map((message) => encodeFrame(message));
          const reader = new FrameReader({ maxFrameBytes: 1_000_000 });
          const sizes: number[] = [];
          const { values, broke } = readAll(reader, split(Buffer.concat(frames), cuts), sizes);
          expect(broke).toBeUndefined();
          expect(sizes).toEqual(frames.map((frame) => frame.length - 4));
          // JSON's own round trip: -0 becomes 0, as it does on the wire.
          expect(values).toEqual(messages.map((message) => JSON.parse(JSON.stringify(message))));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('assembles a frame sent a byte at a time, and the frame after it', () => {
    const big = { type: 'reply', text: 'x'.repeat(200_000) };
    const bytes = Buffer.concat([encodeFrame(big), encodeFrame({ type: 'ready' })]);
    const reader = new FrameReader({ maxFrameBytes: 1_000_000 });
    const chunks = Array.from({ length: bytes.length }, (_, index) => bytes.subarray(index, index + 1));
    expect(readAll(reader, chunks)).toEqual({ values: [big, { type: 'ready' }] });
  });

  it('ends the channel at a header over the cap, before the frame arrives, and reads nothing after', () => {
    const reader = new FrameReader({ maxFrameBytes: 1000 });
    const header = Buffer.alloc(4);
    header.writeUInt32BE(1001);
    expect(readAll(reader, [header])).toEqual({
      values: [],
      broke: 'it announced a message of 1001 bytes, over the 1000-byte cap',
    });
    expect(reader.push(encodeFrame({ type: 'ready' }))).toEqual({
      ok: false,
      reason: 'it announced a message of 1001 bytes, over the 1000-byte cap',
    });
  });

  it('ends the channel at a frame of more values than it allows, counted outside strings', () => {
    const bound = { maxFrameBytes: 10_000_000, maxFrameValues: 100_000 };
    const many = encodeFrame(Array.from({ length: 100_002 }, () => ({})));
    expect(readAll(new FrameReader(bound), [many])).toEqual({
      values: [],
      broke: 'it sent a message of more than 100000 values',
    });
    // Braces, brackets and commas inside strings (escaped quotes too) are text, not values.
    const text = { text: '{[,"'.repeat(100_000) };
    expect(readAll(new FrameReader(bound), [encodeFrame(text)])).toEqual({ values: [text] });
  });
});
