/**
 * Plain data: what may cross between a tool and the host (declarations, `details`, progress). Null,
 * booleans, finite numbers, strings, arrays and objects whose prototype is `Object.prototype` or
 * null; no accessors, proxies, symbols, class instances, holes or cycles; and bounded, in depth and in size,
 * so that neither side spends unbounded stack or memory on it.
 *
 * Used inside workers (on values a tool made, which may be hostile: proxies, getters, patched
 * prototypes) and on the host (on values a worker sent, which are structured clones). Everything it
 * calls is taken when this module loads, before any tool code runs, and it never throws.
 */
import * as types from 'node:util/types';

// Taken when this module loads: a tool that runs later in the same realm may replace any of these
// (an `Array.prototype[Symbol.iterator]` that skips the keys of its deep value, say, would blind a
// `for...of` walk), so the walk reads nothing through a global or a prototype at check time.
const isProxy = types.isProxy;
// Brand checks: what the serializer writes follows an object's internal kind, not its prototype, so
// a Map or an ArrayBuffer given `Object.prototype` would pass as `{}` and cross with all it holds.
const {
  isMap,
  isSet,
  isAnyArrayBuffer,
  isArrayBufferView,
  isNativeError,
  isDate,
  isRegExp,
  isBoxedPrimitive,
} = types;
const isBuiltin = (object: object) =>
  isMap(object) ||
  isSet(object) ||
  isAnyArrayBuffer(object) ||
  isArrayBufferView(object) ||
  isNativeError(object) ||
  isDate(object) ||
  isRegExp(object) ||
  isBoxedPrimitive(object);
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
const SafeMap = Map;
const { get: mapGet, set: mapSet } = Map.prototype;
const objectPrototype = Object.prototype;
const arrayPrototype = Array.prototype;
const numberToString = (value: number) => `${value}`;
const stringSlice = String.prototype.slice;
/** A key as a problem's path shows it: a long one is cut (a key can be as large as the message). */
const shownKey = (key: string) => (key.length > 64 ? `${apply(stringSlice, key, [0, 64])}…` : key);

/** How deep JSON data may nest (objects and arrays), unless a caller sets its own bound. */
export const MAX_DATA_DEPTH = 64;

/**
 * The most entries an array may hold. The walk lists an array's names, which makes a string of
 * every index at once, inside one call into V8 (about 32 bytes each): a worker can't be stopped
 * there at its heap limit, and V8 then ends the whole process. This bounds that listing (about
 * 32 MB), and, with the size bound, an array too long to fit is over it before anything is listed.
 */
export const MAX_ARRAY_ENTRIES = 1_048_576;

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

/** What the walk keeps of an object it has walked: its size, and how many levels of objects it holds. */
interface Measured {
  bytes: number;
  height: number;
}

/** Marks an object the walk is inside of: meeting it again there is a cycle. */
const ON_PATH = null;

/**
 * One check's walk. It runs on every reply a worker sends (in the worker, where tool code shares
 * the realm), and nearly all of them are fine: the path to a value is built only for a problem.
 *
 * An object met a second time (a structured clone keeps shared references) counts its size again,
 * as JSON would write it again, but is not walked again: a chain of 40 arrays that each hold the
 * next one twice is a few hundred bytes to send and 2^40 values to a walk that doesn't remember.
 */
class Walk {
  bytes = 0;
  /** How many levels of objects the value just visited holds. */
  height = 0;
  readonly #maxDepth: number;
  readonly #maxBytes: number;
  /** Objects seen: ON_PATH while the walk is inside them, then what they measured. */
  readonly #seen = new SafeMap<object, Measured | typeof ON_PATH>();

  constructor(maxDepth: number, maxBytes: number) {
    this.#maxDepth = maxDepth;
    this.#maxBytes = maxBytes;
  }

  over(): boolean {
    return this.bytes > this.#maxBytes;
  }

  visit(current: unknown, depth: number): Problem | undefined {
    this.height = 0;
    if (typeof current === 'object' && current !== null) return this.#visitObject(current, depth);
    return this.#visitScalar(current);
  }

  /** A value that is not an object: measured as JSON writes it, or refused. */
  #visitScalar(current: unknown): Problem | undefined {
    switch (typeof current) {
      case 'object': // null
        this.bytes += 4;
        return undefined;
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
      default:
        return problem(`is a ${typeof current}`);
    }
  }

  /** An object or array: measured once (a second reference reuses what it measured), or refused. */
  #visitObject(object: object, depth: number): Problem | undefined {
    const seen = apply(mapGet, this.#seen, [object]) as Measured | typeof ON_PATH | undefined;
    if (seen === ON_PATH) return problem('is a cycle');
    if (seen !== undefined) {
      if (depth + seen.height > this.#maxDepth) return this.#tooDeep();
      this.bytes += seen.bytes;
      this.height = seen.height;
      return undefined;
    }
    if (depth >= this.#maxDepth) return this.#tooDeep();
    const array = isArray(object);
    const refused = refusedContainer(object, array);
    if (refused !== undefined) return refused;
    if (array) {
      // Each entry takes a byte and a separator at the least: one that can't fit is over the bound
      // without a look at its names (see MAX_ARRAY_ENTRIES).
      const entries = (object as unknown[]).length;
      if (this.bytes + 2 * entries > this.#maxBytes) {
        this.bytes += 2 * entries;
        return undefined;
      }
      if (entries > MAX_ARRAY_ENTRIES)
        return problem(`is an array of more than ${MAX_ARRAY_ENTRIES} entries`);
    }
    const names = ownNames(object);
    apply(mapSet, this.#seen, [object, ON_PATH]);
    const start = this.bytes;
    const found = this.#visitMembers(object, array, names, depth);
    if (found !== undefined || this.over()) return found;
    // An array's names are its indexes and `length`; fewer, and it has holes, which JSON writes as
    // `null`: an empty array of length 1e9 would measure 2 bytes here and be 5 GB of JSON.
    if (array && names.length !== (object as unknown[]).length + 1) return problem('is a sparse array');
    const walked: Measured = { bytes: this.bytes - start, height: this.height };
    apply(mapSet, this.#seen, [object, walked]);
    return undefined;
  }

  /** Each own property of a container, in order; sets `height` to the container's. */
  #visitMembers(object: object, array: boolean, names: string[], depth: number): Problem | undefined {
    let below = 0;
    this.bytes += 2;
    for (let index = 0; index < names.length; index++) {
      const key = names[index] as string;
      if (array && key === 'length') continue;
      if (array && !isIndex(key)) return problem(`is an array with a non-index key "${shownKey(key)}"`);
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      let found: Problem | undefined;
      if (!hasOwn(descriptor, 'value')) found = problem('is a getter');
      else {
        this.bytes += array ? 1 : byteLength(key, 'utf8') + 4;
        found = this.visit(descriptor.value, depth + 1);
      }
      if (found !== undefined) {
        found.where = `${array ? `[${key}]` : `.${shownKey(key)}`}${found.where}`;
        return found;
      }
      if (this.height > below) below = this.height;
      if (this.over()) return undefined;
    }
    this.height = below + 1;
    return undefined;
  }

  #tooDeep(): Problem {
    return problem(`is nested deeper than ${this.#maxDepth} levels`);
  }
}

/** Why a container can't be plain data (a Proxy, a class instance, a built-in, a symbol key), if it can't. */
function refusedContainer(object: object, array: boolean): Problem | undefined {
  if (isProxy(object)) return problem('is a Proxy');
  const prototype = getPrototypeOf(object) as object | null;
  if (array ? prototype !== arrayPrototype : prototype !== objectPrototype && prototype !== null) {
    return problem(`is an instance of ${describePrototype(prototype)}`);
  }
  if (!array && isBuiltin(object)) return problem('is a built-in object with its prototype replaced');
  // Reflect.ownKeys would do in one call, at several times the cost of these two.
  if (ownSymbols(object).length > 0) return problem('has a symbol key');
  return undefined;
}

/** An array index: an integer below 2^32 − 1 in its canonical form (larger ones are plain keys). */
function isIndex(key: string): boolean {
  const index = toNumber(key);
  return isInteger(index) && index >= 0 && index < 4_294_967_295 && `${index}` === key;
}

/**
 * The class name a prototype's `constructor` gives, read as own data properties only: no getter
 * runs and nothing a tool can patch is called, so the name can't be made as large as it likes.
 */
function describePrototype(prototype: object | null): string {
  try {
    if (prototype === null || isProxy(prototype)) return 'a class';
    const maker = getOwnPropertyDescriptor(prototype, 'constructor');
    const value: unknown = maker !== undefined && hasOwn(maker, 'value') ? maker.value : undefined;
    if (typeof value !== 'function' || isProxy(value)) return 'a class';
    const name = getOwnPropertyDescriptor(value, 'name');
    const text: unknown = name !== undefined && hasOwn(name, 'value') ? name.value : undefined;
    return typeof text === 'string' && text !== '' ? shownKey(text) : 'a class';
  } catch {
    return 'a class';
  }
}
