/**
 * One text for one value: JSON with every object's keys sorted (by UTF-16 code units, as
 * `Array.prototype.sort` orders strings), no white space, numbers as ECMAScript prints them. Every
 * Node line and every run gives the same text, so its hash names the value.
 */
import { createHash } from 'node:crypto';

/** The canonical JSON of a plain-data value (what crossed a structured clone and was checked). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    // undefined, functions and symbols are not plain data; as JSON.stringify drops them in an
    // object, an array holds null in their place.
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let index = 0; index < value.length; index++) items.push(canonicalJson(value[index]));
    return `[${items.join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${members.join(',')}}`;
}

/** `sha256:<hex>` of the value's canonical JSON. */
export function digestOf(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

/**
 * A copy of a plain-data value whose objects list their keys sorted, for `JSON.stringify` to print
 * in that order. Objects have no prototype, so a key named `__proto__` stays a key.
 */
export function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(sortedCopy);
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(record).sort()) {
    Object.defineProperty(copy, key, {
      value: sortedCopy(record[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}
