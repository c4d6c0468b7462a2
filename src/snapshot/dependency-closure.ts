/**
 * What of a package's `node_modules` a tool module can import: the closure of the package's
 * `dependencies` and `optionalDependencies` (and, from there on, each dependency's dependencies,
 * optional and peer dependencies), found the way Node finds them: from a package's real folder up
 * through every `node_modules` above it, stopping at the package's own. devDependencies (TypeScript,
 * test runners, toolhost itself for its types) are no part of it, and neither is whatever else is
 * installed. A dependency that is not installed is skipped: the import fails as it would in Node.
 *
 * Links inside `node_modules` (pnpm's `.pnpm` layout) stay links in the copy, so each package keeps
 * its real folder and resolves from there as in the original; a link to a folder elsewhere in the
 * package (npm workspaces) is copied as the folder it leads to. A link out of the package (`npm
 * link`) stays a link to the original and is not followed: copying what it leads to would put
 * files the package names but does not hold (anything the user can read) where a sandbox that
 * hides them from the tool lets it read.
 */
import { lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { listTree, type TreeEntry, VCS_FOLDERS } from './package-scan.js';

/** A package's installed dependencies as listed for a snapshot. */
export interface Dependencies {
  /** The real path of the package's node_modules. */
  base: string;
  entries: TreeEntry[];
  /**
   * Where `node_modules` leads when it is itself a link out of the package: nothing of it is
   * listed, as nothing is through any other link out of the package.
   */
  outside?: string;
}

/** A manifest larger than this is not read for dependencies (a package.json is a few KB). */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Dependency names read from one manifest at most (real ones list tens). */
const MAX_NAMES_PER_MANIFEST = 10_000;
/** Links followed for one dependency at most (the system's own bound on link chains is 40). */
const MAX_LINK_HOPS = 40;

/** An npm package name: `name` or `@scope/name`, nothing that climbs out of `node_modules`. */
export const PACKAGE_NAME = /^(?:@[^./\\\0][^/\\\0]*\/)?[^./\\\0_][^/\\\0]*$/;

/** The dependency closure of the package at `root`, or undefined when it has no `node_modules`. */
export async function listDependencyClosure(
  root: string,
  signal: AbortSignal,
): Promise<Dependencies | undefined> {
  const base = await realpath(join(root, 'node_modules')).catch(() => undefined);
  if (base === undefined) return undefined;
  const realRoot = await realpath(root);
  if (!within(realRoot, base)) return { base, entries: [], outside: base };
  const entries = new Map<string, TreeEntry>();
  const placed = new Set<string>();
  // Each package folder is `at` its place in node_modules (relative to `base`, with `/`).
  const pending: Array<{ at: string; names: string[] }> = [
    { at: '', names: dependencyNames(join(root, 'package.json'), false) },
  ];
  // Synchronous calls, as listTree's (a promise each cost more than the calls), with a turn of the
  // event loop between two packages.
  while (pending.length > 0) {
    signal.throwIfAborted();
    const { at, names } = pending.pop() as { at: string; names: string[] };
    for (const name of names) {
      const found = findPackage({ base, realRoot }, at, name, entries);
      if (found === undefined || placed.has(found)) continue;
      placed.add(found);
      for (const entry of await listTree(join(base, found), skipNested, signal))
        entries.set(`${found}/${entry.rel}`, { ...entry, rel: `${found}/${entry.rel}` });
      pending.push({ at: found, names: dependencyNames(join(base, found, 'package.json'), true) });
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  // Every folder on the way to a package, so the copy can make them in order.
  for (const rel of [...entries.keys()])
    for (let folder = dirname(rel); folder !== '.'; folder = dirname(folder))
      if (!entries.has(folder)) entries.set(folder, { type: 'dir', rel: folder });
  const sorted = [...entries.values()].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { base, entries: sorted };
}

/** Where `name` is found from the package at `at`, with the links on the way added to `entries`. */
function findPackage(
  folders: { base: string; realRoot: string },
  at: string,
  name: string,
  entries: Map<string, TreeEntry>,
): string | undefined {
  for (const candidate of lookupPaths(at, name)) {
    const info = unlessFailed(() => statSync(join(folders.base, candidate)));
    if (info?.isDirectory()) return placeOf(folders, candidate, entries);
  }
  return undefined;
}

/**
 * Node's lookup from the folder `at`: `at/node_modules/name`, then the same from each folder above
 * it that is not itself a `node_modules`, up to the package's own `node_modules` (`name`).
 */
function lookupPaths(at: string, name: string): string[] {
  const paths: string[] = [];
  const parts = at === '' ? [] : at.split('/');
  for (let end = parts.length; end > 0; end--) {
    if (parts[end - 1] === 'node_modules') continue;
    paths.push(`${parts.slice(0, end).join('/')}/node_modules/${name}`);
  }
  paths.push(name);
  return paths;
}

/**
 * The folder the copy holds for `candidate`: links inside node_modules are kept (recorded in
 * `entries`) and followed to the real folder; a link to elsewhere in the package is copied where it
 * stands; a link out of the package is kept as it is, and nothing is copied through it.
 */
function placeOf(
  { base, realRoot }: { base: string; realRoot: string },
  candidate: string,
  entries: Map<string, TreeEntry>,
): string | undefined {
  let path = candidate;
  const links: TreeEntry[] = [];
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    const link = firstLink(base, path);
    if (link === undefined) {
      for (const entry of links) entries.set(entry.rel, entry);
      return path;
    }
    const target = unlessFailed(() => readlinkSync(join(base, link.prefix)));
    if (target === undefined) return undefined;
    const pointsTo = isAbsolute(target) ? target : resolve(join(base, dirname(link.prefix)), target);
    if (!within(base, pointsTo)) {
      for (const entry of links) entries.set(entry.rel, entry);
      // Elsewhere in the package: copied as the folder it leads to, where the link stands. Where it
      // leads on disk decides, not its text: a package folder may itself be a link out (`.git`).
      const real = unlessFailed(() => realpathSync(pointsTo));
      if (real !== undefined && within(realRoot, real)) return path;
      entries.set(link.prefix, { type: 'link', rel: link.prefix, target });
      return undefined;
    }
    links.push({ type: 'link', rel: link.prefix, target });
    path = [relative(base, pointsTo).split(sep).join('/'), ...link.rest]
      .filter((part) => part !== '')
      .join('/');
    if (path === '') return undefined;
  }
  return undefined;
}

/** The first part of `rel` (from `base`) that is a symbolic link, and what follows it. */
function firstLink(base: string, rel: string): { prefix: string; rest: string[] } | undefined {
  const parts = rel.split('/');
  for (let end = 1; end <= parts.length; end++) {
    const prefix = parts.slice(0, end).join('/');
    const info = unlessFailed(() => lstatSync(join(base, prefix)));
    if (info === undefined) return undefined;
    if (info.isSymbolicLink()) return { prefix, rest: parts.slice(end) };
  }
  return undefined;
}

/**
 * A package's own files: its nested `node_modules` holds other packages, copied only if needed;
 * version-control folders (in a linked package's checkout) are never imported.
 */
function skipNested(rel: string, name: string): boolean {
  return rel === 'node_modules' || VCS_FOLDERS.has(name);
}

/** The names a manifest depends on; `peers` for installed packages, whose peers are imported too. */
function dependencyNames(manifest: string, peers: boolean): string[] {
  let parsed: unknown;
  try {
    const info = statSync(manifest);
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return [];
    parsed = JSON.parse(readFileSync(manifest, 'utf8'));
  } catch {
    // No manifest, or not JSON: Node would still resolve the package's imports, but nothing says
    // which; its files are copied, its dependencies are not.
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null) return [];
  const fields = ['dependencies', 'optionalDependencies', ...(peers ? ['peerDependencies'] : [])];
  const names = new Set<string>();
  for (const field of fields) {
    const listed: unknown = Object.hasOwn(parsed, field)
      ? (parsed as Record<string, unknown>)[field]
      : undefined;
    if (typeof listed !== 'object' || listed === null || Array.isArray(listed)) continue;
    for (const name of Object.keys(listed)) {
      if (names.size >= MAX_NAMES_PER_MANIFEST) break;
      if (PACKAGE_NAME.test(name)) names.add(name);
    }
  }
  return [...names];
}

/** What `read` returns, or undefined when it fails (a path gone, not a folder, not readable). */
function unlessFailed<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function within(folder: string, path: string): boolean {
  return path === folder || path.startsWith(`${folder}${sep}`);
}
