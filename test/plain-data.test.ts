/**
 * The plain-data check on its own: what it refuses, the path it names for each problem, and what it
 * measures. It runs on every reply a worker posts, so its walk names a path only for a problem; these
 * pin that the path is still the one to the offending value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPlainData, MAX_ARRAY_ENTRIES } from '../dist/src/boundary/plain-data.js';

const limits = { maxDepth: 8, maxBytes: 1_000 };

function problemOf(value: unknown, path?: string): string | undefined {
  const check = checkPlainData(value, limits, path);
  return check.ok ? undefined : check.problem;
}

describe('checkPlainData', () => {
  it('names the path to each kind of value it refuses', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle['self'] = { back: cycle };
    const sparse: unknown[] = [1, 2];
    (sparse as unknown as Record<string, unknown>)['extra'] = true;
    const getter = { outer: [0, Object.defineProperty({}, 'secret', { get: () => 1, enumerable: true })] };

    expect(problemOf({ list: [1, { deep: Number.NaN }] })).toBe('$.list[1].deep is NaN');
    expect(problemOf({ a: { b: () => 1 } })).toBe('$.a.b is a function');
    expect(problemOf({ a: [new Map()] })).toBe('$.a[0] is an instance of Map');
    expect(problemOf({ a: new Proxy({}, {}) })).toBe('$.a is a Proxy');
    expect(problemOf(cycle)).toBe('$.self.back is a cycle');
    expect(problemOf({ s: sparse })).toBe('$.s is an array with a non-index key "extra"');
    expect(problemOf({ k: { [Symbol('x')]: 1 } })).toBe('$.k has a symbol key');
    expect(problemOf(getter)).toBe('$.outer[1].secret is a getter');
    expect(problemOf({ n: 10n })).toBe('$.n is a bigint');
    const holes = [1, 2, 3];
    delete holes[1];
    expect(problemOf({ holes })).toBe('$.holes is a sparse array');
    expect(problemOf([[[[[[[[[[]]]]]]]]]])).toBe('$[0][0][0][0][0][0][0][0] is nested deeper than 8 levels');
    expect(problemOf({ big: 'x'.repeat(2_000) })).toBe('$ is larger than 1000 bytes');
    expect(problemOf({ a: [1, { b: undefined }] }, 'details')).toBe('details.a[1].b is a undefined');
  });

  it('refuses an array of more than MAX_ARRAY_ENTRIES entries, and one too long for the size bound as over it', () => {
    const roomy = { maxDepth: 8, maxBytes: 10 * 1024 * 1024 };
    const atCap = new Array(MAX_ARRAY_ENTRIES).fill(0);
    expect(checkPlainData({ list: atCap }, roomy).ok).toBe(true);
    atCap.push(0);
    expect(checkPlainData({ list: atCap }, roomy)).toEqual({
      ok: false,
      problem: `$.list is an array of more than ${MAX_ARRAY_ENTRIES} entries`,
    });
    // Over the size bound by its length alone: what it holds is never looked at (not even the getter).
    const long = new Array(600).fill(0);
    Object.defineProperty(long, 0, { get: () => 0, enumerable: true });
    expect(problemOf({ long })).toBe('$ is larger than 1000 bytes');
  });

  it('measures an array by its length: an empty one of length 1e9 is not 2 bytes of JSON', () => {
    const huge: unknown[] = [];
    huge.length = 1e9;
    // Its length alone puts it over the size bound: no name of it is listed.
    expect(problemOf({ huge })).toBe('$ is larger than 1000 bytes');
    const stretched = [1, 2];
    stretched.length = 10;
    expect(problemOf([stretched])).toBe('$[0] is a sparse array');
  });

  it('measures a shared object each time it is referenced, as JSON writes it, walking it once', () => {
    const shared = { text: 'shared' };
    const value = { a: shared, b: [shared, shared] };
    const check = checkPlainData(value, { maxDepth: 8, maxBytes: 1_000 });
    expect(check.ok && check.bytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(value)));

    // 2^40 references to one array: walked once per level, it is refused as the 5 TB it would be.
    let pyramid: unknown = [0];
    for (let level = 0; level < 40; level++) pyramid = [pyramid, pyramid];
    expect(checkPlainData(pyramid, { maxDepth: 64, maxBytes: 10_000_000 })).toStrictEqual({
      ok: false,
      problem: '$ is larger than 10000000 bytes',
    });
  });

  it('bounds the depth of a shared object wherever it is referenced', () => {
    let tower: unknown = {};
    for (let level = 0; level < 5; level++) tower = { tower };
    // 6 levels of objects: fine one level down, too deep three levels down (depth 8).
    expect(checkPlainData({ a: tower }, limits).ok).toBe(true);
    expect(problemOf({ a: tower, b: { c: { d: tower } } })).toBe('$.b.c.d is nested deeper than 8 levels');
  });

  it('refuses a built-in object given a plain prototype: the serializer would still write all it holds', () => {
    const map = new Map([[1, 'x'.repeat(10_000)]]);
    Object.setPrototypeOf(map, Object.prototype);
    const buffer = new ArrayBuffer(1_000_000);
    Object.setPrototypeOf(buffer, null);
    const error = new Error('e');
    Object.setPrototypeOf(error, Object.prototype);
    for (const [key, value] of Object.entries({ map, buffer, error })) {
      expect(problemOf({ [key]: value })).toBe(`$.${key} is a built-in object with its prototype replaced`);
    }
  });

  it('names a class without running its getters: a constructor getter can’t grow the message', () => {
    let ran = 0;
    const prototype = {
      get constructor() {
        ran += 1;
        return { name: 'y'.repeat(1_000_000) };
      },
    };
    expect(problemOf({ o: Object.create(prototype) })).toBe('$.o is an instance of a class');
    expect(ran).toBe(0);
  });

  it('counts a key of 2^32 − 1 or more on an array as a key, not an index', () => {
    const array: unknown[] = [0];
    (array as unknown as Record<string, unknown>)['4294967295'] = 1;
    expect(problemOf(array)).toBe('$ is an array with a non-index key "4294967295"');
  });

  it('cuts a long key in the path it names', () => {
    expect(problemOf({ [`k${'e'.repeat(10_000)}`]: Number.NaN })).toBe(`$.k${'e'.repeat(63)}… is NaN`);
  });

  it('finds a problem after siblings that had none, at the right path', () => {
    const value = {
      ok: [1, 'two', { three: 3 }],
      alsoOk: { x: null },
      bad: [true, [false, Symbol.iterator]],
    };
    expect(problemOf(value)).toBe('$.bad[1][1] is a symbol');
  });

  it('accepts JSON data and measures it at no less than its JSON without escapes', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', ' ') });
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', maxDepth: 4 },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        text,
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(text, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        const check = checkPlainData(value, { maxDepth: 64, maxBytes: 1_000_000 });
        expect(check.ok).toBe(true);
        if (check.ok) expect(check.bytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });
});
