/**
 * Symbolic links in a snapshot: where each link the package holds points in the copy, and which of
 * them would let a tool that Node's permission model confines to the snapshot read outside it.
 *
 * The permission model checks the path a tool asks for after resolving its `..` as text; the system
 * then follows links one part at a time, and a `..` after a link climbs from where the link led. So
 * a link must not only point inside the snapshot: it must not point above itself either. Through
 * `tools/sub/up -> ..` a path such as `tools/sub/up/sub/up/../../../../etc/passwd` is inside the
 * package as text and `/etc/passwd` to the system. A link to a file can't be gone through, so only
 * a link whose target is not a file the copy holds counts.
 *
 * Depths are counted in the copy, where the checks matter: own files sit in the version folder and
 * the dependency tree in `node_modules` beside it, both one level below what a strict worker may read.
 */
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isWithin } from '../shared/paths.js';

/** A link among what a snapshot copies that would let a confined tool read outside the snapshot. */
export interface UnconfinedLink {
  /** The link, in the package. */
  readonly link: string;
  /** Where it points (absolute, in the package or outside it). */
  readonly target: string;
  /**
   * `out`: its target is not in the copy. `above`: higher than the link itself, and not a file the
   * copy holds.
   */
  readonly why: 'out' | 'above';
}

/** A snapshot taken for a tool it must confine holds an {@link UnconfinedLink}: it is not made. */
export class UnconfinedSnapshotError extends Error {
  readonly unconfined: UnconfinedLink;

  constructor(unconfined: UnconfinedLink) {
    super(`${unconfined.link} is a symbolic link to ${unconfined.target}`);
    this.name = 'UnconfinedSnapshotError';
    this.unconfined = unconfined;
  }
}

type LinkPart = 'own' | 'dependency';

/** An entry of a snapshot's lists, as far as links go (package-scan.ts's TreeEntry and OwnEntry). */
type ListedEntry = { readonly type: string; readonly rel: string; readonly target?: string };

interface Place {
  /** Where the link points in the package (absolute). */
  pointsTo: string;
  /** The part of the copy that holds that place: none for a link the copy keeps to the original. */
  inPart: LinkPart | undefined;
  /** The target's path inside that part (with the system's separator; '' for the part itself). */
  inside: string;
}

/**
 * Where a link of the package points, and the part of the copy that holds that place: a link that
 * stays inside the part of the package it belongs to (own files, or node_modules), or that leads
 * from the own files into node_modules. None for any other link.
 */
function linkPlace(
  layout: { root: string; base?: string | undefined },
  entry: { rel: string; target: string },
  part: LinkPart,
): Place {
  const dependencyBase = layout.base ?? join(layout.root, 'node_modules');
  const from = join(part === 'own' ? layout.root : dependencyBase, entry.rel);
  const pointsTo = isAbsolute(entry.target) ? entry.target : resolve(dirname(from), entry.target);
  if (isWithin(dependencyBase, pointsTo))
    return { pointsTo, inPart: 'dependency', inside: relative(dependencyBase, pointsTo) };
  if (part === 'own' && isWithin(layout.root, pointsTo))
    return { pointsTo, inPart: 'own', inside: relative(layout.root, pointsTo) };
  return { pointsTo, inPart: undefined, inside: '' };
}

/**
 * Where a link points in the snapshot: a link whose target the copy holds points to the copy of
 * it, relative to where the link stands; any other stays a link to the original ({@link
 * unconfinedLink} names it).
 */
export function linkTarget(
  layout: { root: string; version: string; dependencies: string; base?: string },
  entry: { rel: string; target: string },
  part: LinkPart,
): string {
  const { pointsTo, inPart, inside } = linkPlace(layout, entry, part);
  if (inPart === undefined) return pointsTo;
  const inCopy = join(inPart === 'dependency' ? layout.dependencies : layout.version, inside);
  const linkInCopy = join(part === 'own' ? layout.version : layout.dependencies, entry.rel);
  // A link to the folder it stands in is `.`: an empty target is no link at all.
  return relative(dirname(linkInCopy), inCopy) || '.';
}

/**
 * The first link among a snapshot's entries (its own files', then its dependency closure's) that
 * would let a tool confined to the snapshot read outside it, if any: one the copy keeps to the
 * original, or one to a folder above itself.
 */
export function unconfinedLink(
  root: string,
  own: readonly ListedEntry[],
  dependencies: ListedDependencies | undefined,
): UnconfinedLink | undefined {
  return firstLink(root, own, dependencies, true);
}

/**
 * The first link among a snapshot's entries that the copy keeps to the original, if any: what it
 * leads to is outside the package, so neither the snapshot nor its digest holds it, and it can
 * change under a lock unseen.
 */
export function linkOut(
  root: string,
  own: readonly ListedEntry[],
  dependencies: ListedDependencies | undefined,
): UnconfinedLink | undefined {
  return firstLink(root, own, dependencies, false);
}

/** A dependency closure's entries as far as links go (dependency-closure.ts's Dependencies). */
type ListedDependencies = { base: string; entries: readonly ListedEntry[]; outside?: string };

function firstLink(
  root: string,
  own: readonly ListedEntry[],
  dependencies: ListedDependencies | undefined,
  orAbove: boolean,
): UnconfinedLink | undefined {
  if (dependencies?.outside !== undefined)
    return { link: join(root, 'node_modules'), target: dependencies.outside, why: 'out' };
  const base = dependencies?.base ?? join(root, 'node_modules');
  const lists: Record<LinkPart, readonly ListedEntry[]> = { own, dependency: dependencies?.entries ?? [] };
  let files: Record<LinkPart, Set<string>> | undefined;
  for (const part of ['own', 'dependency'] as const) {
    const layout = part === 'own' ? { root } : { root, base };
    for (const entry of lists[part]) {
      if (entry.type !== 'link' || entry.target === undefined) continue;
      const place = linkPlace(layout, { rel: entry.rel, target: entry.target }, part);
      const link = join(part === 'own' ? root : base, entry.rel);
      if (place.inPart === undefined) return { link, target: place.pointsTo, why: 'out' };
      if (!orAbove || depth(place.inside, sep) >= depth(entry.rel, '/')) continue;
      // Listed once, and only for a package that holds a link going up at all.
      files ??= { own: filesOf(own), dependency: filesOf(lists.dependency) };
      const rel = place.inside.split(sep).join('/');
      if (!files[place.inPart].has(rel)) return { link, target: place.pointsTo, why: 'above' };
    }
  }
  return undefined;
}

/** How many levels below its part of the copy a path is ('' is the part itself: 0). */
function depth(path: string, separator: string): number {
  return path === '' ? 0 : path.split(separator).length;
}

function filesOf(entries: readonly ListedEntry[]): Set<string> {
  return new Set(entries.flatMap((entry) => (entry.type === 'file' ? [entry.rel] : [])));
}
