/**
 * What changed between a pinned declaration and the one read now, as a person reviews it: each
 * changed field by its path (`description`, `parameterSchema.properties.city.type`), with the
 * value it had and the value it has.
 */

import type { JsonValue } from '../boundary/tool-contract.js';
import { segment } from '../declaration/visible-text.js';
import { canonicalJson } from './canonical.js';

/** One changed field. `before` is missing for a field that is new, `after` for one that went. */
export interface LockDifference {
  /** The field's path: `description`, `parameterSchema.properties.city.enum[2]`, or `content`. */
  field: string;
  before?: JsonValue;
  after?: JsonValue;
}

/** Past this many changes the rest are summed up in one: a reason stays readable, a status small. */
export const MAX_DIFFERENCES = 20;

/** The changed fields, deepest path where one value changed, in a stable order. */
export function declarationDifference(before: unknown, after: unknown): LockDifference[] {
  const found: LockDifference[] = [];
  let more = 0;
  const visit = (a: unknown, b: unknown, path: string): void => {
    if (canonicalJson(a) === canonicalJson(b)) return;
    if (isRecord(a) && isRecord(b)) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const key of keys) visit(own(a, key), own(b, key), path === '' ? key : `${path}${segment(key)}`);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      for (let index = 0; index < a.length; index++) visit(a[index], b[index], `${path}[${index}]`);
      return;
    }
    if (found.length >= MAX_DIFFERENCES) {
      more += 1;
      return;
    }
    const difference: LockDifference = { field: path === '' ? '(the declaration)' : path };
    if (a !== undefined) difference.before = a as JsonValue;
    if (b !== undefined) difference.after = b as JsonValue;
    found.push(difference);
  };
  visit(before, after, '');
  if (more > 0) found.push({ field: `(${more} more ${more === 1 ? 'change' : 'changes'})` });
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A key's own value (a missing `__proto__` must not read the prototype). */
function own(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
