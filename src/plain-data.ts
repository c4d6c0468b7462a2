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

const isProxy = types.isProxy;
const isArray = Array.isArray;
const getPrototypeOf = Object.getPrototypeOf;
const ownKeys = Reflect.ownKeys;
const getOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
const byteLength = Buffer.byteLength;
const objectPrototype = Object.prototype;
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
  const onPath = new Set<object>();
  let bytes = 0;
  const over = () => bytes > limits.maxBytes;

  const visit = (current: unknown, at: string, depth: number): string | undefined => {
    if (current === null) {
      bytes += 4;
      return undefined;
    }
    switch (typeof current) {
      case 'string':
        bytes += byteLength(current, 'utf8') + 2;
        return undefined;
      case 'boolean':
        bytes += 5;
        return undefined;
      case 'number':
        if (!Number.isFinite(current)) return `${at} is ${current}`;
        bytes += numberToString(current).length;
        return undefined;
      case 'object':
        break;
      default:
        return `${at} is a ${typeof current}`;
    }
    const object = current as object;
    if (isProxy(object)) return `${at} is a Proxy`;
    if (onPath.has(object)) return `${at} is a cycle`;
    if (depth >= limits.maxDepth) return `${at} is nested deeper than ${limits.maxDepth} levels`;
    const array = isArray(object);
    const prototype = getPrototypeOf(object) as object | null;
    if (array ? prototype !== Array.prototype : prototype !== objectPrototype && prototype !== null) {
      return `${at} is an instance of ${describePrototype(prototype)}`;
    }
    onPath.add(object);
    bytes += 2;
    for (const key of ownKeys(object)) {
      if (typeof key === 'symbol') return `${at} has a symbol key`;
      if (array && key === 'length') continue;
      if (array && !isIndex(key)) return `${at} is an array with a non-index key "${key}"`;
      const descriptor = getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined) continue;
      if (!('value' in descriptor)) return `${at}.${key} is a getter`;
      bytes += array ? 1 : byteLength(key, 'utf8') + 4;
      const found = visit(descriptor.value, array ? `${at}[${key}]` : `${at}.${key}`, depth + 1);
      if (found !== undefined) return found;
      if (over()) return undefined;
    }
    onPath.delete(object);
    return undefined;
  };

  let problem: string | undefined;
  try {
    problem = visit(value, path, 0);
  } catch {
    // Only hostile values get here (a revoked Proxy nested where isProxy can't see it, say).
    problem = `${path} can't be inspected`;
  }
  if (problem !== undefined) return { ok: false, problem };
  if (over()) return { ok: false, problem: `${path} is larger than ${limits.maxBytes} bytes` };
  return { ok: true, bytes };
}

function isIndex(key: string): boolean {
  const index = Number(key);
  return Number.isInteger(index) && index >= 0 && `${index}` === key;
}

function describePrototype(prototype: object | null): string {
  try {
    const name = (prototype as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' && name !== '' ? name.slice(0, 64) : 'a class';
  } catch {
    return 'a class';
  }
}
