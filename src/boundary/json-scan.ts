/**
 * What JSON.stringify would meet in a tool's return value (one that is neither a string nor a
 * tagged result), looked at before it is written: the first function, symbol or Proxy in it, which
 * JSON would drop or can't read, and whether its JSON would be larger than a bound. Writing a
 * value's JSON is one call into V8, where a worker can't be stopped at its heap limit: V8 then ends
 * the whole process it runs in. So a value too large is refused before it is written, as soon as
 * the walk has measured past the bound.
 *
 * The walk reads what JSON would: own string-keyed data properties, an array's entries by index (a
 * list of an array's keys would make a string of every index at once), each shared object measured
 * once and counted each time it is met. Binary data (typed arrays, `ArrayBuffer`s, `Buffer`s) is
 * counted at four bytes of JSON a byte and not walked. A cycle, or a value nested deeper than 64
 * levels, ends the walk there: JSON.stringify refuses a cycle, and the value is then shown by
 * `util.inspect`, which bounds what it writes.
 */
import * as types from 'node:util/types';

const isProxy = types.isProxy;
const isAnyArrayBuffer = types.isAnyArrayBuffer;
const isArrayBufferView = types.isArrayBufferView;
const isArray = Array.isArray;
const ownKeys = Reflect.ownKeys;
const getOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
const hasOwn = Object.hasOwn;
const byteLength = Buffer.byteLength;
const MAX_DEPTH = 64;

export type JsonScan = { unsafe: string } | { over: true } | undefined;

export function scanForJson(value: unknown, maxBytes: number): JsonScan {
  /** Objects the walk is inside of (`-1`), or has measured (their size). */
  const measured = new Map<object, number>();
  let bytes = 0;
  let found: JsonScan;

  const visitMember = (member: unknown, depth: number): boolean => {
    if (typeof member === 'function') found = { unsafe: 'a function' };
    else if (typeof member === 'symbol') found = { unsafe: 'a symbol' };
    else if (typeof member === 'string') bytes += byteLength(member, 'utf8') + 2;
    else if (typeof member === 'object' && member !== null) visitObject(member, depth);
    else bytes += `${member as string}`.length;
    if (found === undefined && bytes > maxBytes) found = { over: true };
    return found === undefined;
  };

  const visitObject = (object: object, depth: number): void => {
    if (isProxy(object)) {
      found = { unsafe: 'a Proxy' };
      return;
    }
    const known = measured.get(object);
    if (known !== undefined) {
      if (known >= 0) bytes += known;
      return;
    }
    if (depth > MAX_DEPTH) return;
    if (isArrayBufferView(object) || isAnyArrayBuffer(object)) {
      bytes += 4 * (object as ArrayBuffer).byteLength;
      return;
    }
    measured.set(object, -1);
    const start = bytes;
    bytes += 2;
    if (isArray(object)) {
      const length = object.length;
      // Each entry takes a byte and a separator at the least.
      if (bytes + 2 * length > maxBytes) {
        found = { over: true };
        return;
      }
      for (let index = 0; index < length; index++) {
        const descriptor = getOwnPropertyDescriptor(object, index);
        bytes += 1;
        const entry = descriptor !== undefined && hasOwn(descriptor, 'value') ? descriptor.value : null;
        if (!visitMember(entry, depth + 1)) return;
      }
    } else {
      const keys = ownKeys(object);
      for (let index = 0; index < keys.length; index++) {
        const key = keys[index];
        if (typeof key !== 'string') continue;
        const descriptor = getOwnPropertyDescriptor(object, key);
        if (descriptor === undefined || !hasOwn(descriptor, 'value')) continue;
        bytes += byteLength(key, 'utf8') + 4;
        if (!visitMember(descriptor.value, depth + 1)) return;
      }
    }
    measured.set(object, bytes - start);
  };

  visitMember(value, 0);
  return found;
}
