/**
 * Reading values that a worker sent (structured clones). A clone of a plain object is a host-realm
 * object with own data properties only: reading those can't run a worker's code or throw. These
 * helpers read only that: records (plain objects, not arrays or class instances), own properties,
 * and bounded counts.
 */

export type Data = Record<string, unknown>;

/** `value` when it is a plain object (prototype `Object.prototype` or null), else undefined. */
export function record(value: unknown): Data | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null ? (value as Data) : undefined;
}

/** An own property's value; never one inherited from `Object.prototype` (`constructor`, `toString`). */
export function own(data: Data | undefined, key: string): unknown {
  return data !== undefined && Object.hasOwn(data, key) ? data[key] : undefined;
}

/** `value` when it is an integer from 0 to `max`, else undefined. */
export function count(value: unknown, max: number): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max
    ? value
    : undefined;
}
