/**
 * Plain data: what may cross between a tool and the host (declarations, `details`, progress). Null,
 * booleans, finite numbers, strings, arrays and objects whose prototype is `Object.prototype` or
 * null; no accessors, proxies, symbols, class instances or cycles; and bounded, in depth and in size,
 * so that neither side spends unbounded stack or memory on it.
 *
 * Used inside workers (on values a tool made, which may be hostile: proxies, getters, patched
 * prototypes) and on the host (on values a worker sent, which are structured clones). Everything it
 * calls is taken when this module loads, before any tool code runs, and it never throws.
 */
import { types } from 'node:util';

// Taken when this module loads: a tool that runs later in the same realm may replace any of these
// (an `Array.prototype[Symbol.iterator]` that skips the keys of its deep value, say, would blind a
// `for...of` walk), so the walk reads nothing through a global or a prototype at check time.
const isProxy = types.isProxy;
const isArray = Array.isArray;
const getPrototypeOf = Object.getPrototypeOf;
const ownNames = Object.getOwnPropertyNames;
const ownSymbols = Object.getOwnPropertySymbols;
const getOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
const hasOwn = Object.hasOwn;
const apply = Reflect.apply;
const byteLength = Buffer.byteLength;
const isFiniteNumber = Number.isFinite;
const isInteger = Number.isInteger;
const toNumber = Number;
const SafeSet = Set;
const { add: setAdd, has: setHas, delete: setDelete } = Set.prototype;
const objectPrototype = Object.prototype;
const arrayPrototype = Array.prototype;
const numberToString = (value: number) => `${value}`;

/** How deep JSON data may nest (objects and arrays), unless a caller sets its own bound. */
export const MAX_DATA_DEPTH = 64;

export interface PlainDataLimits {
  /** Objects and arrays nested deeper than this are refused. */
  maxDepth: number;
  /** Roughly the UTF-8 size of the value's JSON; larger values are refused. */
  maxBytes: number;
}

export type PlainDataCheck = { ok: true; bytes: number } | { ok: false; problem: string };

/**
 * Checks that `value` is plain JSON data within `limits`, and measures it (about the size of its
 * JSON, in UTF-8 bytes). `path` names the value in the problem it reports.
 */
export function checkPlainData(value: unknown, limits: PlainDataLimits, path = '$'): PlainDataCheck {
  const walk = new Walk(limits.maxDepth, limits.maxBytes);
  let problem: Problem | undefined;
  try {
    problem = walk.visit(value, 0);
  } catch {
    // Only hostile values get here (a revoked Proxy nested where isProxy can't see it, say).
    return { ok: false, problem: `${path} can't be inspected` };
  }
  if (problem !== undefined) return { ok: false, problem: `${path}${problem.where} ${problem.what}` };
  if (walk.over()) return { ok: false, problem: `${path} is larger than ${limits.maxBytes} bytes` };
  return { ok: true, bytes: walk.bytes };
}

/** What is wrong, and where below the root (`.key[0]`): spelled out as the walk unwinds. */
interface Problem {
  where: string;
  what: string;
}

const problem = (what: string): Problem => ({ where: '', what });

/**
 * One check's walk. It runs on every reply a worker sends (in the worker, where tool code shares
 * the realm), and nearly all of them are fine: the path to a value is built only for a problem.
 */
class Walk {
  bytes = 0;
  readonly #maxDepth: number;
  readonly #maxBytes: number;
  /** The objects from the root down to the one being visited: a cycle returns to one of them. */
  readonly #onPath = new SafeSet<object>();

  constructor(maxDepth: number, maxBytes: number) {
    this.#maxDepth = maxDepth;
    this.#maxBytes = maxBytes;
  }

  over(): boolean {
    return this.bytes > this.#maxBytes;
  }

  visit(current: unknown, depth: number): Problem | undefined {
    if (current === null) {
      this.bytes += 4;
      return undefined;
    }
    switch (typeof current) {
      case 'string':
        this.bytes += byteLength(current, 'utf8') + 2;
        return undefined;
      case 'boolean':
        this.bytes += 5;
        return undefined;
      case 'number':
        if (!isFiniteNumber(current)) return problem(`is ${current}`);
        this.bytes += numberToString(current).length;
        return undefined;
      case 'object':
        break;
      default:
        return problem(`is a ${typeof current}`);
    }
    const object = current as object;
    if (isProxy(object)) return problem('is a Proxy');
    if (apply(setHas, this.#onPath, [object])) return problem('is a cycle');
    if (depth >= this.#maxDepth) return problem(`is nested deeper than ${this.#maxDepth} levels`);
    const array = isArray(object);
    const prototype = getPrototypeOf(object) as object | null;
    if (array ? prototype !== arrayPrototype : prototype !== objectPrototype && prototype !== null) {
      return problem(`is an instance of ${describePrototype(prototype)}`);
    }
    // Reflect.ownKeys would do in one call, at several times the cost of these two.
    if (ownSymbols(object).length > 0) return problem('has a symbol key');
    const names = ownNames(object);
    apply(setAdd, this.#onPath, [object]);
    this.bytes += 2;
    for (let index = 0; index < names.length; index++) {
      const key = names[index] as string;
      if (array && key === 'length') continue;
      if (array && !isIndex(key)) return problem(`is an array with a non-index key "${key}"`);
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      let found: Problem | undefined;
      if (!hasOwn(descriptor, 'value')) found = problem('is a getter');
      else {
        this.bytes += array ? 1 : byteLength(key, 'utf8') + 4;
        found = this.visit(descriptor.value, depth + 1);
      }
      if (found !== undefined) {
        found.where = `${array ? `[${key}]` : `.${key}`}${found.where}`;
        return found;
      }
      if (this.over()) return undefined;
    }
    // An array's names are its indexes and `length`; fewer, and it has holes, which JSON writes as
    // `null`: an empty array of length 1e9 would measure 2 bytes here and be 5 GB of JSON.
    if (array && names.length !== (object as unknown[]).length + 1) return problem('is a sparse array');
    apply(setDelete, this.#onPath, [object]);
    return undefined;
  }
}

function isIndex(key: string): boolean {
  const index = toNumber(key);
  return isInteger(index) && index >= 0 && `${index}` === key;
}

function describePrototype(prototype: object | null): string {
  try {
    const name = (prototype as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' && name !== '' ? name.slice(0, 64) : 'a class';
  } catch {
    return 'a class';
  }
}
