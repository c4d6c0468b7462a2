/**
 * The secrets proxy's search of bodies as they stream (ChunkReplacer): however the bytes are split
 * into chunks, what comes out is what the same search makes of the whole (replaceInText), and each
 * occurrence is heard once. A placeholder or value split across a chunk boundary, at every offset.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ChunkReplacer,
  makePlaceholder,
  type Needle,
  replaceInText,
} from '../dist/src/process/network/secrets/replace.js';

/** What a replacer makes of `chunks`, and the secrets it heard, in order. */
function streamed(needles: readonly Needle[], chunks: readonly Buffer[]): { out: Buffer; heard: string[] } {
  const heard: string[] = [];
  const replacer = new ChunkReplacer(needles, (name) => heard.push(name));
  const parts = chunks.map((chunk) => replacer.push(chunk));
  parts.push(replacer.end());
  return { out: Buffer.concat(parts), heard };
}

/** The same search over the whole text (latin1: one character a byte, as the needles here are ASCII). */
function whole(needles: readonly Needle[], bytes: Buffer): { out: Buffer; heard: string[] } {
  const heard: string[] = [];
  const text = replaceInText(bytes.toString('latin1'), needles, (name) => heard.push(name));
  return { out: Buffer.from(text, 'latin1'), heard };
}

/** `bytes` cut at each of `cuts` (sorted, duplicates make empty chunks). */
function split(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    chunks.push(bytes.subarray(from, cut));
    from = cut;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

const VALUE = 'ghp_real-value-0123456789abcdefghijklmnop';
const placeholder = makePlaceholder();
const OTHER = makePlaceholder();
const swapIn: Needle[] = [
  { find: placeholder, replace: VALUE, name: 'API_TOKEN' },
  { find: OTHER, replace: undefined, name: 'OTHER_TOKEN' },
];
const swapBack: Needle[] = [{ find: VALUE, replace: placeholder, name: 'API_TOKEN' }];

describe('a placeholder or a value split across chunks', () => {
  const text = Buffer.from(`{"a":"${placeholder}","b":"${OTHER}","c":"x${placeholder}${placeholder}"}`);

  it('at every offset, and every pair of offsets, comes out as the whole would', () => {
    const expected = whole(swapIn, text);
    expect(expected.out.toString()).toBe(`{"a":"${VALUE}","b":"${OTHER}","c":"x${VALUE}${VALUE}"}`);
    expect(expected.heard).toEqual(['API_TOKEN', 'OTHER_TOKEN', 'API_TOKEN', 'API_TOKEN']);
    for (let first = 0; first <= text.length; first += 1) {
      for (let second = first; second <= text.length; second += 1) {
        const got = streamed(swapIn, split(text, [first, second]));
        if (!got.out.equals(expected.out) || got.heard.join() !== expected.heard.join())
          expect({ first, second, ...got, out: got.out.toString() }).toEqual({
            first,
            second,
            ...expected,
            out: expected.out.toString(),
          });
      }
    }
  });

  it('byte by byte: a value echoed back goes back to its placeholder', () => {
    const echoed = Buffer.from(`token=${VALUE}&again=${VALUE}${VALUE.slice(0, 10)}`);
    const bytes = [...echoed].map((byte) => Buffer.from([byte]));
    const got = streamed(swapBack, bytes);
    expect(got.out.toString()).toBe(`token=${placeholder}&again=${placeholder}${VALUE.slice(0, 10)}`);
    expect(got.heard).toEqual(['API_TOKEN', 'API_TOKEN']);
  });

  it('only noticing: every chunk goes on as it came, at once, and each occurrence is heard once', () => {
    const noticed = swapIn.map((needle) => ({ ...needle, replace: undefined }));
    for (let cut = 0; cut <= text.length; cut += 1) {
      const heard: string[] = [];
      const replacer = new ChunkReplacer(noticed, (name) => heard.push(name));
      const [head, tail] = split(text, [cut]) as [Buffer, Buffer];
      // Nothing is held back: each push gives its whole chunk.
      expect(replacer.push(head).equals(head)).toBe(true);
      expect(replacer.push(tail).equals(tail)).toBe(true);
      expect(replacer.end().length).toBe(0);
      expect(heard).toEqual(['API_TOKEN', 'OTHER_TOKEN', 'API_TOKEN', 'API_TOKEN']);
    }
  });

  it('holds back no more than a needle could still become: an end that could not match goes on at once', () => {
    const replacer = new ChunkReplacer(swapBack);
    // A stream of events: each chunk whole, as none of it begins the value.
    expect(replacer.push(Buffer.from('data: 1\n\n')).toString()).toBe('data: 1\n\n');
    // An end that begins the value waits, and goes on with the next chunk when it turns out not to be it.
    expect(replacer.push(Buffer.from(`data: ${VALUE.slice(0, 8)}`)).toString()).toBe('data: ');
    expect(replacer.push(Buffer.from('!\n\n')).toString()).toBe(`${VALUE.slice(0, 8)}!\n\n`);
  });
});

describe('any needles, any text, any split', () => {
  // A small alphabet, so needles overlap, share starts and hold one another.
  const letters = fc.constantFrom('a', 'b', 'c', '-');
  const word = (min: number, max: number) =>
    fc.array(letters, { minLength: min, maxLength: max }).map((list) => list.join(''));
  const needles = fc
    .uniqueArray(fc.record({ find: word(1, 6), replace: fc.option(word(0, 8), { nil: undefined }) }), {
      minLength: 1,
      maxLength: 4,
      selector: (needle) => needle.find,
    })
    .map((list) => list.map((needle, index) => ({ ...needle, name: `S${index}` })));

  // A text made mostly of the needles themselves (and their starts), with a little around them.
  const case_ = needles.chain((list) =>
    fc.tuple(
      fc.constant(list),
      fc
        .array(
          fc.oneof(
            fc.constantFrom(...list.map((needle) => needle.find)),
            fc.constantFrom(...list.map((needle) => needle.find.slice(0, -1))),
            word(0, 3),
          ),
          { maxLength: 12 },
        )
        .map((parts) => parts.join('')),
      fc.array(fc.nat({ max: 80 }), { maxLength: 6 }),
    ),
  );

  it('comes out as the whole would, and hears the same occurrences', () => {
    fc.assert(
      fc.property(case_, ([list, text, cuts]) => {
        const bytes = Buffer.from(text, 'latin1');
        const chunks = split(
          bytes,
          cuts.map((cut) => Math.min(cut, bytes.length)),
        );
        const got = streamed(list, chunks);
        const expected = whole(list, bytes);
        expect(got.out.toString('latin1')).toBe(expected.out.toString('latin1'));
        expect(got.heard).toEqual(expected.heard);
      }),
      { numRuns: 3000 },
    );
  });
});
