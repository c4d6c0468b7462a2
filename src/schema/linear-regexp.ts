/**
 * A regular-expression engine for the `pattern`s of untrusted schemas that takes time linear in the
 * input: a parser for the JSON Schema regex dialect (pattern-parser.ts) and a Pike VM that
 * runs all paths of the pattern at once. Node's own engine backtracks: `^(a+)+$` on 40 a's and a `!`
 * takes longer than the universe is old, on the host's thread, where input is validated.
 *
 * What it can't do in linear time it refuses, so a schema using it is left out with a reason:
 * backreferences and lookaround. Single characters (literals, `.`, classes, escapes such as `\d` or
 * `\p{L}`) are decided by Node's engine on one code point at a time, where it can't backtrack.
 */
import { type CharTest, Parser, type PatternNode, refuse } from './pattern-parser.js';

/** The most states a compiled pattern may have (counted repetitions are unrolled). */
export const MAX_PATTERN_STATES = 10_000;

/** A Thompson NFA: states in an array, `next` indices, `split` to two. */
type State =
  | { type: 'char'; test: CharTest; next: number }
  | { type: 'assert'; kind: 'start' | 'end' | 'boundary' | 'not-boundary'; next: number }
  | { type: 'split'; next: number; other: number }
  | { type: 'match' };

class Compiler {
  readonly states: State[] = [];
  readonly #pattern: string;

  constructor(pattern: string) {
    this.#pattern = pattern;
  }

  #add(state: State): number {
    if (this.states.length >= MAX_PATTERN_STATES) {
      refuse(this.#pattern, `needs more than ${MAX_PATTERN_STATES} states to match in linear time`);
    }
    this.states.push(state);
    return this.states.length - 1;
  }

  /** Compiles `node` to run into `next`; returns its entry state. */
  compile(node: PatternNode, next: number): number {
    switch (node.type) {
      case 'char':
        return this.#add({ type: 'char', test: node.test, next });
      case 'assert':
        return this.#add({ type: 'assert', kind: node.kind, next });
      case 'group': {
        const entries = node.alternatives.map((terms) =>
          terms.reduceRight((after, term) => this.compile(term, after), next),
        );
        return entries.reduceRight((other, entry) => this.#add({ type: 'split', next: entry, other }));
      }
      case 'repeat': {
        let entry = next;
        if (node.max === Number.POSITIVE_INFINITY) {
          // A loop: split into the body (which comes back here) or on.
          const loop = this.#add({ type: 'split', next: -1, other: next });
          const body = this.compile(node.node, loop);
          (this.states[loop] as { next: number }).next = body;
          entry = loop;
        } else {
          for (let optional = node.max - node.min; optional > 0; optional--) {
            entry = this.#add({ type: 'split', next: this.compile(node.node, entry), other: next });
          }
        }
        for (let required = node.min; required > 0; required--) entry = this.compile(node.node, entry);
        return entry;
      }
    }
  }
}

const WORD = /^[A-Za-z0-9_]$/;

function isWordAt(codePoints: number[], index: number): boolean {
  const codePoint = codePoints[index];
  return codePoint !== undefined && WORD.test(String.fromCodePoint(codePoint));
}

/** A `RegExpLike` for Ajv: `test` runs every path of the pattern at once (a Pike VM). */
export function linearRegExp(pattern: string): { test(input: string): boolean; toString(): string } {
  const compiler = new Compiler(pattern);
  const match = compiler.states.push({ type: 'match' }) - 1;
  const start = compiler.compile(new Parser(pattern).parse(), match);
  const { states } = compiler;

  const test = (input: string): boolean => {
    const codePoints = Array.from(input, (char) => char.codePointAt(0) as number);
    let current: number[] = [];
    let seen = new Uint32Array(states.length);
    let generation = 1;
    const pending: number[] = [];
    // Adds the states reachable from `from` without reading a character (an explicit stack: a long
    // chain of splits must not cost call-stack depth); true when the match state is among them.
    const add = (list: number[], from: number, at: number): boolean => {
      pending.push(from);
      for (let index = pending.pop(); index !== undefined; index = pending.pop()) {
        if (seen[index] === generation) continue;
        seen[index] = generation;
        const state = states[index] as State;
        if (state.type === 'match') {
          pending.length = 0;
          return true;
        }
        if (state.type === 'split') pending.push(state.other, state.next);
        else if (state.type === 'char') list.push(index);
        else {
          const holds =
            state.kind === 'start'
              ? at === 0
              : state.kind === 'end'
                ? at === codePoints.length
                : (isWordAt(codePoints, at - 1) !== isWordAt(codePoints, at)) === (state.kind === 'boundary');
          if (holds) pending.push(state.next);
        }
      }
      return false;
    };
    for (let at = 0; ; at++) {
      // Unanchored: a match may start at every position.
      if (add(current, start, at)) return true;
      if (at === codePoints.length) return false;
      const codePoint = codePoints[at] as number;
      const next: number[] = [];
      generation++;
      if (generation === 0xffffffff) {
        seen = new Uint32Array(states.length);
        generation = 1;
      }
      for (const index of current) {
        const state = states[index] as State & { type: 'char' };
        if (state.test(codePoint) && add(next, state.next, at + 1)) return true;
      }
      current = next;
    }
  };
  return { test, toString: () => `/${pattern}/linear` };
}

/** The engine as Ajv's `code.regExp` option takes it. */
export const linearRegExpEngine = Object.assign((pattern: string) => linearRegExp(pattern), {
  code: 'linearRegExp',
});
