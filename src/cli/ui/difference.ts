/**
 * A lock's difference on screen: one line per changed field, `field: before → after`, each value as
 * JSON, cut to fit a line, with every character the lint refuses written as an escape (a "before"
 * comes from the lock file, which is edited by hand and never linted).
 */
import { showHidden } from '../../declaration/visible-text.js';
import type { LockDifference } from '../../lock/difference.js';
import { truncate } from './terminal.js';

/** The widest a value is shown; `--json` has the whole. */
const VALUE_WIDTH = 72;

export function differenceLines(difference: readonly LockDifference[], indent: string): string[] {
  return difference.map((change) => {
    if (!('before' in change) && !('after' in change)) return `${indent}${change.field}`;
    return `${indent}${change.field}: ${shown(change.before)} → ${shown(change.after)}`;
  });
}

function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  return truncate(showHidden(JSON.stringify(value) ?? String(value)), VALUE_WIDTH);
}
