/**
 * encodeResult on a tool's plain return value (neither a string nor a tagged result), on its own:
 * what can't be sent is named, and a value whose JSON would be over twice the budget is refused
 * before it is written (writing it is one call into V8, where a worker can't be stopped at its
 * heap limit), measured as JSON would write it: entries by index, shared objects each time, binary
 * data at four bytes a byte.
 */
import { describe, expect, it } from 'vitest';
import { encodeResult } from '../dist/src/boundary/encode-result.js';

const BUDGET = 1_000;
const MAX_JSON = 2 * BUDGET + 64;
const refusedAsLarge = {
  ok: false,
  error: {
    code: 'TOOL_BAD_RESULT',
    message: `the tool returned a value of more than ${MAX_JSON} bytes as JSON, over twice the ${BUDGET}-byte cap (a string is cut to fit instead)`,
  },
};

describe('encodeResult of a plain value', () => {
  it('names a function, a symbol or a Proxy inside it', () => {
    const refused = (what: string) => ({
      ok: false,
      error: {
        code: 'TOOL_BAD_RESULT',
        message: `the tool returned ${what}, which can't be sent to the model`,
      },
    });
    expect(encodeResult({ rows: [1, { f: () => 1 }] }, BUDGET)).toEqual(refused('a function'));
    expect(encodeResult([Symbol('s')], BUDGET)).toEqual(refused('a symbol'));
    expect(encodeResult({ p: new Proxy({}, {}) }, BUDGET)).toEqual(refused('a Proxy'));
  });

  it('writes and cuts a value up to twice the budget as JSON, and refuses a larger one unwritten', () => {
    const cut = encodeResult({ text: 'x'.repeat(1_500) }, BUDGET);
    expect(cut.ok && cut.cutBytes).toBeGreaterThan(0);
    expect(encodeResult({ text: 'x'.repeat(2_100) }, BUDGET)).toEqual(refusedAsLarge);
    // Too long for the bound by its length alone: none of its entries is read.
    const long = new Array(2_000).fill(0);
    Object.defineProperty(long, 0, { get: () => 0, enumerable: true });
    expect(encodeResult(long, BUDGET)).toEqual(refusedAsLarge);
    expect(encodeResult(new Array(5_000_000).fill(123_456_789), 10 * 1024 * 1024)).toMatchObject({
      ok: false,
      error: { code: 'TOOL_BAD_RESULT' },
    });
  });

  it('counts a shared object each time JSON would write it, walking it once', () => {
    let pyramid: unknown = ['leaf'];
    for (let level = 0; level < 40; level++) pyramid = [pyramid, pyramid];
    expect(encodeResult(pyramid, BUDGET)).toEqual(refusedAsLarge);
    const shared = { name: 'shared' };
    const fine = encodeResult({ a: shared, b: shared }, BUDGET);
    expect(fine.ok && fine.content).toEqual([
      { type: 'text', text: '{"a":{"name":"shared"},"b":{"name":"shared"}}' },
    ]);
  });

  it('counts binary data at four bytes a byte, without walking it', () => {
    expect(encodeResult({ bytes: new Uint8Array(600) }, BUDGET)).toEqual(refusedAsLarge);
    expect(encodeResult({ bytes: new Uint8Array(100_000_000) }, BUDGET)).toEqual(refusedAsLarge);
  });

  it('shows a cycle with util.inspect, as before', () => {
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle['self'] = cycle;
    const shown = encodeResult(cycle, BUDGET);
    expect(shown.ok && shown.content[0]).toEqual({
      type: 'text',
      text: "<ref *1> { name: 'loop', self: [Circular *1] }",
    });
  });
});
