/**
 * The parser of the linear engine (linear-regexp.ts): the JSON Schema regex dialect (ECMA-262 with
 * the `u` flag), by recursive descent over code points, into a tree the compiler turns into states.
 * What can't be matched in linear time (backreferences, lookaround) is refused here, with the reason.
 */

export type CharTest = (codePoint: number) => boolean;

export type PatternNode =
  | { type: 'char'; test: CharTest }
  | { type: 'assert'; kind: 'start' | 'end' | 'boundary' | 'not-boundary' }
  | { type: 'group'; alternatives: PatternNode[][] }
  | { type: 'repeat'; node: PatternNode; min: number; max: number };

class PatternError extends Error {}

export function refuse(pattern: string, why: string): never {
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
export class Parser {
  readonly #pattern: string;
  readonly #chars: string[];
  #at = 0;

  constructor(pattern: string) {
    this.#pattern = pattern;
    this.#chars = [...pattern];
  }

  parse(): PatternNode {
    const node = this.#disjunction();
    if (this.#at < this.#chars.length) refuse(this.#pattern, `has an unmatched ")" at ${this.#at}`);
    return node;
  }

  #peek(offset = 0): string | undefined {
    return this.#chars[this.#at + offset];
  }

  #disjunction(): PatternNode {
    const alternatives: PatternNode[][] = [this.#alternative()];
    while (this.#peek() === '|') {
      this.#at++;
      alternatives.push(this.#alternative());
    }
    return { type: 'group', alternatives };
  }

  #alternative(): PatternNode[] {
    const terms: PatternNode[] = [];
    for (let char = this.#peek(); char !== undefined && char !== '|' && char !== ')'; char = this.#peek()) {
      terms.push(this.#term());
    }
    return terms;
  }

  #term(): PatternNode {
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

  #atom(): PatternNode {
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

  #group(): PatternNode {
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

  #quantified(node: PatternNode): PatternNode {
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
