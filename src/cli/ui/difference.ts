/**
 * A lock's difference on screen: one line per changed field, `field: before → after`, each value as
 * JSON, cut to fit a line, with every character the lint refuses written as an escape (a "before"
 * comes from the lock file, which is edited by hand and never linted). A digest (`sha256:…`) is
 * never cut: a change of content shows as `changed`, `added` or `removed`, and `--json` has both
 * digests whole.
 */
import { showHidden } from '../../declaration/visible-text.js';
import type { LockDifference } from '../../lock/difference.js';
import { truncate } from './terminal.js';

/** The widest a value is shown; `--json` has the whole. */
const VALUE_WIDTH = 72;

const DIGEST = /^sha256:[0-9a-f]{64}$/;

export function differenceLines(difference: readonly LockDifference[], indent: string): string[] {
  return difference.map((change) => {
    if (!('before' in change) && !('after' in change)) return `${indent}${showHidden(change.field)}`;
    const digests = [change.before, change.after].every((value) => value === undefined || isDigest(value));
    if (digests) return `${indent}${showHidden(change.field)}: ${digestChange(change)}`;
    return `${indent}${change.field}: ${shown(change.before)} → ${shown(change.after)}`;
  });
}

function isDigest(value: unknown): boolean {
  return typeof value === 'string' && DIGEST.test(value);
}

function digestChange(change: LockDifference): string {
  if (change.before === undefined) return 'added';
  if (change.after === undefined) return 'removed';
  return 'changed';
}

function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  return truncate(showHidden(JSON.stringify(value) ?? String(value)), VALUE_WIDTH);
}
