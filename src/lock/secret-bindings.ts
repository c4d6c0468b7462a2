/**
 * A package's secret bindings as a lock records them: each secret's name and the hosts it is bound
 * to, never a value (the lock never sees one). A binding that changed since it was pinned is named
 * field by field (`secrets.GITHUB_TOKEN`), as a changed declaration is.
 */
import type { SecretBinding } from '../process/network/secrets/bindings.js';
import { canonicalJson } from './canonical.js';
import { declarationDifference, type LockDifference } from './difference.js';

/** Secret name to the hosts it is bound to, as the manifest wrote them. */
export type LockedBindings = Record<string, string[]>;

/** The bindings as a lock entry holds them; undefined for a package that binds none. */
export function lockedBindings(bindings: readonly SecretBinding[] | undefined): LockedBindings | undefined {
  if (bindings === undefined || bindings.length === 0) return undefined;
  return Object.fromEntries(bindings.map((binding) => [binding.name, [...binding.hosts]]));
}

/** Each changed binding (`secrets.NAME`), or none when they are the same. */
export function bindingsDifference(
  before: LockedBindings | undefined,
  after: LockedBindings | undefined,
): LockDifference[] {
  if (canonicalJson(before ?? {}) === canonicalJson(after ?? {})) return [];
  return declarationDifference({ secrets: before ?? {} }, { secrets: after ?? {} });
}

/** Whether a lock entry's `secrets` field is what pinning writes; the reason otherwise. */
export function checkLockedBindings(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'has "secrets" that is not an object of secret names to hosts';
  for (const hosts of Object.values(value)) {
    if (!Array.isArray(hosts) || !hosts.every((host) => typeof host === 'string'))
      return 'has "secrets" whose hosts are not a list of strings';
  }
  return undefined;
}
