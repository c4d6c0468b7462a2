/**
 * Whether an installed package's version satisfies the version or range an `npx <pkg>@<range>`
 * entry names, by npm's own rules: `semver`, the library npm reads ranges with. It is loaded on first
 * use (only a config with a versioned npx entry needs it), so importing toolhost doesn't load it.
 */
import { createRequire } from 'node:module';
import type { satisfies as Satisfies, valid as Valid, validRange as ValidRange } from 'semver';

interface Semver {
  valid: typeof Valid;
  validRange: typeof ValidRange;
  satisfies: typeof Satisfies;
}

let semver: Semver | undefined;

function loaded(): Semver {
  if (semver === undefined) {
    const require = createRequire(import.meta.url);
    semver = {
      valid: require('semver/functions/valid'),
      validRange: require('semver/ranges/valid'),
      satisfies: require('semver/functions/satisfies'),
    };
  }
  return semver;
}

/** Whether `version` is a semver version (an installed package's, as npm writes it). */
export function isVersion(version: string): boolean {
  return loaded().valid(version) !== null;
}

/** Whether `version` satisfies `range`; undefined when `range` is not a range npm reads (a dist-tag, nonsense). */
export function satisfiesRange(version: string, range: string): boolean | undefined {
  const { validRange, satisfies } = loaded();
  return validRange(range) === null ? undefined : satisfies(version, range);
}
