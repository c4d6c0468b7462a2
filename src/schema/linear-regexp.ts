/**
 * A regular-expression engine for the `pattern`s of untrusted schemas that takes time linear in the
 * input: a parser for the JSON Schema regex dialect (ECMA-262 with the `u` flag) and a Pike VM that
 * runs all paths of the pattern at once. Node's own engine backtracks: `^(a+)+$` on 40 a's and a `!`
 * takes longer than the universe is old, on the host's thread, where input is validated.
 *
 * What it can't do in linear time it refuses, so a schema using it is left out with a reason:
 * backreferences and lookaround. Single characters (literals, `.`, classes, escapes such as `\d` or
 * `\p{L}`) are decided by Node's engine on one code point at a time, where it can't backtrack.
 */

/** The most states a compiled pattern may have (counted repetitions are unrolled). */
export const MAX_PATTERN_STATES = 10_000;

type CharTest = (codePoint: number) => boolean;

type Node =
  | { type: 'char'; test: CharTest }
  | { type: 'assert'; kind: 'start' | 'end' | 'boundary' | 'not-boundary' }
  | { type: 'group'; alternatives: Node[][] }
  | { type: 'repeat'; node: Node; min: number; max: number };

class PatternError extends Error {}

function refuse(pattern: string, why: string): never {
  throw new PatternError(`pattern ${JSON.stringify(pattern)} ${why}`);
}

const LINE_TERMINATORS = new Set([0x0a, 0x0d, 0x2028, 0x2029]);

/** A test of one code point by Node's engine: with a one-character input it has nothing to backtrack. */
function nativeCharTest(source: string, pattern: string): CharTest {
  let native: RegExp;
  try {
    native = new RegExp(`^(?:${source})$`, 'u');
  } catch (error) {
    refuse(pattern, `is not a valid regular expression: ${(error as Error).message}`);
  }
  return (codePoint) => native.test(String.fromCodePoint(codePoint));
}

/** Recursive descent over the pattern, in code points. */
class Parser {
  readonly #pattern: string;
  readonly #chars: string[];
  #at = 0;

  constructor(pattern: string) {
    this.#pattern = pattern;
    this.#chars = [...pattern];
  }

  parse(): Node {
    const node = this.#disjunction();
    if (this.#at < this.#chars.length) refuse(this.#pattern, `has an unmatched ")" at ${this.#at}`);
    return node;
  }

  #peek(offset = 0): string | undefined {
    return this.#chars[this.#at + offset];
  }

  #disjunction(): Node {
    const alternatives: Node[][] = [this.#alternative()];
    while (this.#peek() === '|') {
      this.#at++;
      alternatives.push(this.#alternative());
    }
    return { type: 'group', alternatives };
  }

  #alternative(): Node[] {
    const terms: Node[] = [];
    for (let char = this.#peek(); char !== undefined && char !== '|' && char !== ')'; char = this.#peek()) {
      terms.push(this.#term());
    }
    return terms;
  }

  #term(): Node {
    const char = this.#peek();
    if (char === '^' || char === '$') {
      this.#at++;
      return { type: 'assert', kind: char === '^' ? 'start' : 'end' };
    }
    if (char === '\\' && (this.#peek(1) === 'b' || this.#peek(1) === 'B')) {
      this.#at += 2;
      return { type: 'assert', kind: this.#chars[this.#at - 1] === 'b' ? 'boundary' : 'not-boundary' };
    }
    return this.#quantified(this.#atom());
  }

  #atom(): Node {
    const char = this.#peek() as string;
    if (char === '(') return this.#group();
    if (char === '[') return { type: 'char', test: nativeCharTest(this.#classSource(), this.#pattern) };
    if (char === '.') {
      this.#at++;
      return { type: 'char', test: (codePoint) => !LINE_TERMINATORS.has(codePoint) };
    }
    if (char === '\\') return { type: 'char', test: nativeCharTest(this.#escapeSource(), this.#pattern) };
    if ('*+?{}])|'.includes(char)) refuse(this.#pattern, `has a misplaced "${char}" at ${this.#at}`);
    this.#at++;
    const codePoint = char.codePointAt(0) as number;
    return { type: 'char', test: (other) => other === codePoint };
  }

  #group(): Node {
    this.#at++;
    if (this.#peek() === '?') {
      const kind = this.#peek(1);
      if (kind === ':') this.#at += 2;
      else if (kind === '<' && this.#peek(2) !== '=' && this.#peek(2) !== '!') {
        // A named group: its name doesn't change what matches.
        while (this.#peek() !== undefined && this.#peek() !== '>') this.#at++;
        this.#at++;
      } else
        refuse(
          this.#pattern,
          "uses a lookahead or lookbehind, which toolhost's linear-time matcher doesn't support",
        );
    }
    const node = this.#disjunction();
    if (this.#peek() !== ')') refuse(this.#pattern, 'has an unclosed "("');
    this.#at++;
    return node;
  }

  /** `[…]` as it is written, to be tested by Node's engine one character at a time. */
  #classSource(): string {
    const start = this.#at;
    this.#at++;
    if (this.#peek() === '^') this.#at++;
    while (this.#peek() !== undefined && this.#peek() !== ']') this.#at += this.#peek() === '\\' ? 2 : 1;
    if (this.#peek() !== ']') refuse(this.#pattern, 'has an unclosed "["');
    this.#at++;
    return this.#chars.slice(start, this.#at).join('');
  }

  /** An escape (`\d`, `\.`, `\u{1F600}`, `\p{L}`) as it is written; backreferences are refused. */
  #escapeSource(): string {
    const start = this.#at;
    const next = this.#peek(1);
    if (next === undefined) refuse(this.#pattern, 'ends with "\\"');
    if (/[1-9]/.test(next) || next === 'k')
      refuse(this.#pattern, 'uses a backreference, which no linear-time matcher supports');
    this.#at += 2;
    if ((next === 'u' || next === 'p' || next === 'P') && this.#peek() === '{') {
      while (this.#peek() !== undefined && this.#peek() !== '}') this.#at++;
      this.#at++;
    } else if (next === 'u') this.#at += 4;
    else if (next === 'x') this.#at += 2;
    else if (next === 'c') this.#at += 1;
    return this.#chars.slice(start, this.#at).join('');
  }

  #quantified(node: Node): Node {
    const char = this.#peek();
    let min: number;
    let max: number;
    if (char === '*' || char === '+' || char === '?') {
      this.#at++;
      min = char === '+' ? 1 : 0;
      max = char === '?' ? 1 : Number.POSITIVE_INFINITY;
    } else if (char === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(this.#chars.slice(this.#at, this.#at + 24).join(''));
      if (match === null) refuse(this.#pattern, `has a "{" that is not a quantifier at ${this.#at}`);
      this.#at += [...match[0]].length;
      min = Number(match[1]);
      max = match[2] === undefined ? min : match[3] === '' ? Number.POSITIVE_INFINITY : Number(match[3]);
      if (max < min) refuse(this.#pattern, 'has a quantifier whose maximum is below its minimum');
    } else {
      return node;
    }
    // Lazy or greedy makes no difference to whether a string matches.
    if (this.#peek() === '?') this.#at++;
    if (node.type === 'assert') refuse(this.#pattern, 'quantifies an assertion');
    return { type: 'repeat', node, min, max };
  }
}

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
  compile(node: Node, next: number): number {
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
