/**
 * The linear-time matcher for schemas' patterns: it agrees with Node's own engine on what matches
 * (a differential property over generated patterns and inputs), takes time linear in the input where
 * Node's engine backtracks exponentially, and refuses what it can't match in linear time.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linearRegExp } from '../dist/src/schema/linear-regexp.js';
import { FUZZ_RUNS } from './support/hostile-arbitraries.js';

/** Patterns of the dialect, built from parts: atoms, groups, alternation, quantifiers, anchors. */
const pattern: fc.Arbitrary<string> = fc.letrec<{ pattern: string; term: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('a', 'b', 'é', '😀', '.', '\\d', '\\w', '\\s', '[ab]', '[^a]', '[a-c]', '\\.', '\\p{L}'),
    tie('pattern').map((inner) => `(${inner})`),
    tie('pattern').map((inner) => `(?:${inner})`),
  ),
  term: fc.oneof(
    tie('atom'),
    fc
      .tuple(tie('atom'), fc.constantFrom('*', '+', '?', '{2}', '{0,2}', '{1,}', '*?', '+?'))
      .map(([atom, quantifier]) => `${atom}${quantifier}`),
    fc.constantFrom('^', '$', '\\b', '\\B'),
  ),
  pattern: fc
    .array(
      fc.array(tie('term'), { minLength: 0, maxLength: 4 }).map((terms) => terms.join('')),
      {
        minLength: 1,
        maxLength: 3,
      },
    )
    .map((alternatives) => alternatives.join('|')),
})).pattern;

/** Short inputs over the atoms' alphabet: Node's engine stays fast on them whatever the pattern. */
const input = fc
  .array(fc.constantFrom('a', 'b', 'c', 'é', '😀', ' ', '1', '.', '\n'), { maxLength: 10 })
  .map((chars) => chars.join(''));

describe('the linear-time pattern matcher', () => {
  it("agrees with Node's engine on generated patterns and inputs", () => {
    fc.assert(
      fc.property(pattern, input, (source, text) => {
        let native: RegExp;
        try {
          native = new RegExp(source, 'u');
        } catch {
          return; // Not a pattern of the dialect (a generated `a**`, say): nothing to compare.
        }
        // Node's engine also tries word boundaries between the two halves of a surrogate pair
        // (`/\B/u` finds one inside "😀"); positions here are code points, as the spec has them.
        if (/\\[bB]/.test(source) && /[\u{10000}-\u{10FFFF}]/u.test(text)) return;
        expect(linearRegExp(source).test(text)).toBe(native.test(text));
      }),
      { numRuns: FUZZ_RUNS * 50 },
    );
  });

  it('answers at once where backtracking would take longer than the universe is old', () => {
    const catastrophic = linearRegExp('^(a+)+$');
    expect(catastrophic.test(`${'a'.repeat(5000)}!`)).toBe(false);
    expect(catastrophic.test('a'.repeat(5000))).toBe(true);
    expect(linearRegExp('^(a|aa)+$').test(`${'a'.repeat(5000)}b`)).toBe(false);
  });

  it.each([
    ['(a)\\1', 'uses a backreference, which no linear-time matcher supports'],
    ['(?<x>a)\\k<x>', 'uses a backreference, which no linear-time matcher supports'],
    ['(?=a)a', "uses a lookahead or lookbehind, which toolhost's linear-time matcher doesn't support"],
    ['(?<!a)b', "uses a lookahead or lookbehind, which toolhost's linear-time matcher doesn't support"],
    ['a{0,20000}', 'needs more than 10000 states to match in linear time'],
    ['a{3,1}', 'has a quantifier whose maximum is below its minimum'],
    ['(a', 'has an unclosed "("'],
    ['[a', 'has an unclosed "["'],
  ])('refuses %s: it %s', (source, why) => {
    expect(() => linearRegExp(source)).toThrow(`pattern ${JSON.stringify(source)} ${why}`);
  });
});
