/**
 * Whether an installed package's version satisfies the version or range an `npx <pkg>@<range>`
 * entry names, by npm's rules (semver ranges): exact versions, `=`, `<`, `<=`, `>`, `>=`, `~`,
 * `^`, x-ranges (`1`, `1.x`, `1.2.*`, `*`), hyphen ranges (`1.2.3 - 2.3.4`) and `||`. A prerelease
 * version satisfies a range only when a comparator of the same release names a prerelease too.
 */

type Version = { major: number; minor: number; patch: number; prerelease: string[] };
type Comparator = { operator: '<' | '<=' | '>' | '>=' | '='; version: Version };

const NUMBER = '0|[1-9]\\d{0,15}';
const PART = `(${NUMBER}|[xX*])`;
const PRERELEASE = '(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?';
const VERSION = new RegExp(`^v?(${NUMBER})\\.(${NUMBER})\\.(${NUMBER})${PRERELEASE}$`);
const PARTIAL = new RegExp(`^(<=|>=|<|>|=|~>?|\\^)?v?${PART}(?:\\.${PART}(?:\\.${PART}${PRERELEASE})?)?$`);

/** `version` parsed, or undefined when it is not a semver version. */
export function parseVersion(version: string): Version | undefined {
  const match = VERSION.exec(version.trim());
  if (match === null) return undefined;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease: match[4] === undefined ? [] : match[4].split('.'),
  };
}

/** Whether `version` satisfies `range`; undefined when `range` is not a range npm reads. */
export function satisfiesRange(version: string, range: string): boolean | undefined {
  const parsed = parseVersion(version);
  if (parsed === undefined || range.length > 256) return undefined;
  const sets: Comparator[][] = [];
  for (const alternative of range.split('||')) {
    const set = comparatorSet(alternative.trim());
    if (set === undefined) return undefined;
    sets.push(set);
  }
  return sets.some((set) => setSatisfied(parsed, set));
}

function setSatisfied(version: Version, set: readonly Comparator[]): boolean {
  if (!set.every(({ operator, version: bound }) => holds(compare(version, bound), operator))) return false;
  if (version.prerelease.length === 0) return true;
  return set.some(
    ({ version: bound }) =>
      bound.prerelease.length > 0 &&
      bound.major === version.major &&
      bound.minor === version.minor &&
      bound.patch === version.patch,
  );
}

function holds(order: number, operator: Comparator['operator']): boolean {
  if (operator === '=') return order === 0;
  if (operator === '<') return order < 0;
  if (operator === '<=') return order <= 0;
  if (operator === '>') return order > 0;
  return order >= 0;
}

/** One space-separated set (`>=1.2 <2`, `1.2.3 - 2`), as primitive comparators. */
function comparatorSet(text: string): Comparator[] | undefined {
  // `>= 1.2` is `>=1.2`; a hyphen range is its two ends.
  const words = text
    .replace(/(<=|>=|<|>|=|~>?|\^)\s+/g, '$1')
    .split(/\s+/)
    .filter(Boolean);
  if (words.length === 0) return [];
  if (words.length === 3 && words[1] === '-') {
    const low = expand(`>=${words[0]}`);
    const high = hyphenHigh(words[2] ?? '');
    return low === undefined || high === undefined ? undefined : [...low, ...high];
  }
  const set: Comparator[] = [];
  for (const word of words) {
    const comparators = expand(word);
    if (comparators === undefined) return undefined;
    set.push(...comparators);
  }
  return set;
}

/** The upper end of a hyphen range: `- 2.3` is `<2.4.0-0`, `- 2.3.4` is `<=2.3.4`. */
function hyphenHigh(word: string): Comparator[] | undefined {
  const match = PARTIAL.exec(word);
  if (match === null || match[1] !== undefined) return undefined;
  const [major, minor, patch] = [number(match[2]), number(match[3]), number(match[4])];
  if (major === undefined) return [];
  if (minor === undefined) return [lessThan(major + 1, 0, 0)];
  if (patch === undefined) return [lessThan(major, minor + 1, 0)];
  return [{ operator: '<=', version: at(major, minor, patch, match[5]) }];
}

/** One comparator word (`^1.2`, `~1`, `>=1.2.3`, `1.x`) as primitive comparators. */
function expand(word: string): Comparator[] | undefined {
  const match = PARTIAL.exec(word);
  if (match === null) return undefined;
  const operator = match[1] ?? '=';
  const [major, minor, patch] = [number(match[2]), number(match[3]), number(match[4])];
  const prerelease = match[5];
  if (major === undefined) return operator === '<' || operator === '>' ? [lessThan(0, 0, 0)] : [];
  const low = at(major, minor ?? 0, patch ?? 0, prerelease);
  if (operator === '^') {
    const high =
      major > 0 || minor === undefined
        ? lessThan(major + 1, 0, 0)
        : minor > 0 || patch === undefined
          ? lessThan(0, minor + 1, 0)
          : lessThan(0, 0, patch + 1);
    return [{ operator: '>=', version: low }, high];
  }
  if (operator.startsWith('~')) {
    const high = minor === undefined ? lessThan(major + 1, 0, 0) : lessThan(major, minor + 1, 0);
    return [{ operator: '>=', version: low }, high];
  }
  if (minor === undefined || patch === undefined) {
    // A partial version: `1.2` is `>=1.2.0 <1.3.0-0`, `>1.2` is `>=1.3.0`, `<=1.2` is `<1.3.0-0`.
    const next = minor === undefined ? at(major + 1, 0, 0) : at(major, minor + 1, 0);
    if (operator === '=')
      return [
        { operator: '>=', version: low },
        { operator: '<', version: prior(next) },
      ];
    if (operator === '>') return [{ operator: '>=', version: next }];
    if (operator === '<=') return [{ operator: '<', version: prior(next) }];
    if (operator === '<') return [{ operator: '<', version: prior(low) }];
    return [{ operator: '>=', version: low }];
  }
  return [{ operator: operator as Comparator['operator'], version: low }];
}

function number(part: string | undefined): number | undefined {
  return part === undefined || /^[xX*]$/.test(part) ? undefined : Number(part);
}

function at(major: number, minor: number, patch: number, prerelease?: string): Version {
  return { major, minor, patch, prerelease: prerelease === undefined ? [] : prerelease.split('.') };
}

/** The lowest version of a release (`x.y.z-0`): a bound below it excludes the release's prereleases. */
function prior(version: Version): Version {
  return { ...version, prerelease: ['0'] };
}

function lessThan(major: number, minor: number, patch: number): Comparator {
  return { operator: '<', version: prior(at(major, minor, patch)) };
}

function compare(left: Version, right: Version): number {
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (left[key] !== right[key]) return left[key] < right[key] ? -1 : 1;
  }
  const [a, b] = [left.prerelease, right.prerelease];
  if (a.length === 0 || b.length === 0) return b.length - a.length;
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const [x, y] = [a[index], b[index]];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const [xNumber, yNumber] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (xNumber && yNumber) return Number(x) < Number(y) ? -1 : 1;
    if (xNumber !== yNumber) return xNumber ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}
