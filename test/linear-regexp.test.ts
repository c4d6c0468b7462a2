/**
 * The linear-time matcher for schemas' patterns: it agrees with Node's own engine on what matches
 * (a differential property over generated patterns and inputs), takes time linear in the input where
 * Node's engine backtracks exponentially, and refuses what it can't match in linear time.
 */

import { Worker } from 'node:worker_threads';
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

/** Short inputs over the atoms' alphabet (short is not always enough for Node's engine: see NodeEngine). */
const input = fc
  .array(fc.constantFrom('a', 'b', 'c', 'é', '😀', ' ', '1', '.', '\n'), { maxLength: 10 })
  .map((chars) => chars.join(''));

/** How long Node's engine may take over one case before the case goes without an answer. */
const ORACLE_MS = 5_000;

/**
 * Node's own engine, the property's oracle, run in a worker. It backtracks: on some generated
 * patterns a short input takes it far too long (one took 41 s on eight characters here, about
 * eight times longer with each one more, and hung the suite on ten). A case it can't answer within
 * {@link ORACLE_MS} is not compared; its worker is ended (V8 stops a running expression at once)
 * and another takes over.
 */
class NodeEngine {
  // Each worker answers into a buffer of its own: one that timed out may still write its late answer
  // (its end is not at once), which must not be read as the next case's: a run on Node 26 read
  // false for ["[^a]$", "😀"], which both engines match.
  #answer = new Int32Array(new SharedArrayBuffer(8));
  #worker = this.#start();
  unanswered = 0;

  #start(): Worker {
    this.#answer = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(
      `const { parentPort, workerData: answer } = require('node:worker_threads');
parentPort.on('message', ({ source, text }) => {
  Atomics.store(answer, 1, new RegExp(source, 'u').test(text) ? 1 : 0);
  Atomics.store(answer, 0, 1);
  Atomics.notify(answer, 0);
});`,
      { eval: true, workerData: this.#answer },
    );
    worker.unref();
    return worker;
  }

  /** Whether `source` matches `text` in Node's engine; undefined when it did not answer in time. */
  test(source: string, text: string): boolean | undefined {
    Atomics.store(this.#answer, 0, 0);
    this.#worker.postMessage({ source, text });
    if (Atomics.wait(this.#answer, 0, 0, ORACLE_MS) === 'timed-out') {
      this.unanswered += 1;
      void this.#worker.terminate();
      this.#worker = this.#start();
      return undefined;
    }
    return Atomics.load(this.#answer, 1) === 1;
  }

  end(): Promise<number> {
    return this.#worker.terminate();
  }
}

describe('the linear-time pattern matcher', () => {
  it("agrees with Node's engine on generated patterns and inputs", async () => {
    const node = new NodeEngine();
    let compared = 0;
    try {
      fc.assert(
        fc.property(pattern, input, (source, text) => {
          try {
            new RegExp(source, 'u');
          } catch {
            return; // Not a pattern of the dialect (a generated `a**`, say): nothing to compare.
          }
          // Node's engine also tries word boundaries between the two halves of a surrogate pair
          // (`/\B/u` finds one inside "😀"); positions here are code points, as the spec has them.
          if (/\\[bB]/.test(source) && /[\u{10000}-\u{10FFFF}]/u.test(text)) return;
          const expected = node.test(source, text);
          if (expected === undefined) return;
          compared += 1;
          expect(linearRegExp(source).test(text)).toBe(expected);
        }),
        { numRuns: FUZZ_RUNS * 50 },
      );
    } finally {
      await node.end();
    }
    // The oracle answered (nearly) every case: the property compared, and didn't just skip.
    expect(compared).toBeGreaterThan(node.unanswered * 10);
  });

  it("a case on which Node's engine backtracks far past the bound (41 s for eight of its ten characters here) goes without an oracle, and the next case has one", () => {
    const node = new NodeEngine();
    const source =
      '(|(?:(😀?|[a-c]?(?:😀||\\d)\\d\\p{L}|^(?:é\\.^)\\B)[ab]\\B(?:\\s\\d[ab]$)|😀|.(.\\s+))(?:||😀[ab][a-c][^a])+?(?:|(\\s\\w{2}[a-c]|)(?:$|\\w[ab]$)\\db){1,}(?:ba+?é(a\\w[^a]é))*|((😀{0,2}(?:[^a]?||\\w*)|$😀\\B[ab]|\\w)+)*?(\\B($(?:b[a-c]|[^a]$|a\\s)\\d[a-c]|\\w?(|[ab]\\.)|.a)*?|😀)){1,}^\\.+?';
    const text = '1\nbcé b.c ';
    expect(linearRegExp(source).test(text)).toBe(false);
    expect(node.test(source, text)).toBeUndefined();
    expect(node.unanswered).toBe(1);
    // The next case is answered by the worker that took over.
    expect(node.test('^a+$', 'aaa')).toBe(true);
    return node.end();
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
