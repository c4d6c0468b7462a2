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
  /**
   * The field's path: `description`, `parameterSchema.properties.city.enum[2]`, or `content`, and
   * then `files["tools/x.js"]` for each file of the content that changed (when the lock has the
   * files' digests).
   */
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

/** A version's content as a lock pins it: its digest, and its files' digests when known. */
export interface PinnedContent {
  content: string;
  files?: Readonly<Record<string, string>> | undefined;
}

/**
 * What changed in the content: `content` (the two digests), then each file added, removed or
 * changed, by path, when both sides have the files' digests.
 */
export function contentDifference(before: PinnedContent, after: PinnedContent): LockDifference[] {
  const found: LockDifference[] = [{ field: 'content', before: before.content, after: after.content }];
  for (const path of changedFiles(before, after) ?? []) {
    if (found.length > MAX_DIFFERENCES) {
      found.push({ field: '(more changed files)' });
      break;
    }
    const difference: LockDifference = { field: `files${segment(path)}` };
    if (before.files !== undefined && Object.hasOwn(before.files, path))
      difference.before = before.files[path] as string;
    if (after.files !== undefined && Object.hasOwn(after.files, path))
      difference.after = after.files[path] as string;
    found.push(difference);
  }
  return found;
}

/** The paths whose digests differ (added, removed or changed), sorted; undefined when a side has none. */
export function changedFiles(before: PinnedContent, after: PinnedContent): string[] | undefined {
  const { files: old } = before;
  const { files: now } = after;
  if (old === undefined || now === undefined) return undefined;
  const paths = new Set([...Object.keys(old), ...Object.keys(now)]);
  return [...paths]
    .filter(
      (path) =>
        (Object.hasOwn(old, path) ? old[path] : undefined) !==
        (Object.hasOwn(now, path) ? now[path] : undefined),
    )
    .sort();
}
