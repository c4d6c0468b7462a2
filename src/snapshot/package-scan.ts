/**
 * Walking a package for its snapshot: its own files (hashed, so a version is named by its content)
 * and its `node_modules` (fingerprinted by file identity, so an unchanged dependency tree is neither
 * hashed nor copied again). Links are listed, never followed.
 */
import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DEFAULT_LOCK_FILE_NAME } from '../lock/lock-file.js';
import type { FileStore } from './file-store.js';
import { MAX_FILE_DIGESTS, nearestPackageScope } from './layout.js';

/** What tells one version of a file from another without reading it. */
export interface FileIdentity {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/** One entry of a tree, by its path relative to the tree's base (with `/`). */
export type TreeEntry =
  | { type: 'dir'; rel: string }
  | { type: 'file'; rel: string; identity: FileIdentity }
  | { type: 'link'; rel: string; target: string };

/** An own file of a package, with the hash of the copy in the store. */
export type OwnEntry =
  | Exclude<TreeEntry, { type: 'file' }>
  | { type: 'file'; rel: string; hash: string; bytes: number };

/** Version-control folders: never imported, often large, and changing with every commit. */
export const VCS_FOLDERS: ReadonlySet<string> = new Set(['.git', '.hg', '.svn']);

/** Entries listed between two turns of the event loop (a few milliseconds of system calls). */
const ENTRIES_PER_TURN = 256;

/**
 * Lists `base` recursively, sorted by path (a folder before what it holds). An entry removed while
 * it is listed is skipped: the package is changing, and its next scan sees where it settled.
 *
 * One folder at a time with the file system's synchronous calls, giving the event loop a turn every
 * {@link ENTRIES_PER_TURN} entries: a `node_modules` of thousands of files is listed at every load
 * (its fingerprint is how a changed dependency is seen), and a promise per file cost several times
 * the system calls themselves (a 6,811-entry closure: 0.2–0.6 s against 0.05–0.1 s).
 */
export async function listTree(
  base: string,
  skip: (rel: string, name: string) => boolean,
  signal: AbortSignal,
): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  const folders = [''];
  let sinceTurn = 0;
  while (folders.length > 0) {
    signal.throwIfAborted();
    const rel = folders.pop() as string;
    const dirents = unlessGone(() => readdirSync(join(base, rel), { withFileTypes: true })) ?? [];
    for (const dirent of dirents) {
      const child = rel === '' ? dirent.name : `${rel}/${dirent.name}`;
      if (skip(child, dirent.name)) continue;
      if (dirent.isDirectory()) {
        entries.push({ type: 'dir', rel: child });
        folders.push(child);
      } else if (dirent.isSymbolicLink()) {
        const target = unlessGone(() => readlinkSync(join(base, child)));
        if (target !== undefined) entries.push({ type: 'link', rel: child, target });
      } else if (dirent.isFile()) {
        const info = unlessGone(() => lstatSync(join(base, child), { bigint: true }));
        if (info?.isFile()) entries.push({ type: 'file', rel: child, identity: identityOf(info) });
      }
      // Sockets, pipes and devices are no part of a package.
    }
    sinceTurn += dirents.length + 1;
    if (sinceTurn >= ENTRIES_PER_TURN) {
      sinceTurn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return entries.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/**
 * The package's own tree: everything but its top-level `node_modules`, VCS folders and a lock file
 * of reviewed declarations at its top (pinning writes it after the content was digested: counted,
 * it would change the content it pins).
 */
export function skipOwn(rel: string, name: string): boolean {
  return rel === 'node_modules' || rel === DEFAULT_LOCK_FILE_NAME || VCS_FOLDERS.has(name);
}

/**
 * Remembers the hash of each file by its identity, so an unchanged file is not read again. An entry
 * counts only once its file had been left alone for {@link SETTLE_MS} when it was hashed: a file
 * written twice within one tick of the file system's clock, with the same size, keeps its identity,
 * so a file that was that fresh is read again at the next scan (git's "racy" rule).
 */
export class HashCache {
  readonly #entries = new Map<string, { identity: FileIdentity; hash: string; settled: boolean }>();

  known(path: string, identity: FileIdentity): string | undefined {
    const entry = this.#entries.get(path);
    return entry?.settled && sameIdentity(entry.identity, identity) ? entry.hash : undefined;
  }

  remember(path: string, identity: FileIdentity, hash: string): void {
    const settled = Date.now() - Number(identity.mtimeNs / 1_000_000n) > SETTLE_MS;
    this.#entries.set(path, { identity, hash, settled });
  }

  forget(prefix: string): void {
    for (const path of this.#entries.keys()) if (path.startsWith(prefix)) this.#entries.delete(path);
  }
}

const SETTLE_MS = 2_000;

/**
 * Whether a file was left alone long enough before `now` that its identity names its content: one
 * written again within the same tick of the file system's clock could keep every time unchanged.
 */
export function settled(identity: FileIdentity, now: number): boolean {
  // The change time is never before the modification time: every write and every utimes moves it.
  return now - Number(identity.ctimeNs / 1_000_000n) > SETTLE_MS;
}

/**
 * The package's own files with their copies placed in the store: a file not known by its identity is
 * copied (and hashed in the same pass), so what the store holds is exactly what was hashed. A file
 * that can't be read is left out: no worker of this process could read it either.
 */
export async function placeOwnFiles(
  base: string,
  listed: readonly TreeEntry[],
  options: { store: FileStore; cache: HashCache; signal: AbortSignal },
): Promise<OwnEntry[]> {
  const placed: Array<OwnEntry | undefined> = new Array(listed.length);
  await forEachLimit(listed, 16, async (entry, index) => {
    if (entry.type !== 'file') {
      placed[index] = entry;
      return;
    }
    const path = join(base, entry.rel);
    let hash = options.cache.known(path, entry.identity);
    if (hash === undefined) {
      hash = await options.store.place(path, options.signal).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'EACCES' || error.code === 'EISDIR') return undefined;
        throw error;
      });
      if (hash === undefined) return;
      options.cache.remember(path, entry.identity, hash);
    }
    placed[index] = { type: 'file', rel: entry.rel, hash, bytes: Number(entry.identity.size) };
  });
  return placed.filter((entry) => entry !== undefined);
}

/**
 * A module loaded on its own, placed in the store alone, with a package.json that keeps the module
 * format its own folder gave it (the `type` of the nearest package.json above it, if there is one).
 */
export async function placeLoneModule(
  path: string,
  options: { store: FileStore; signal: AbortSignal },
): Promise<OwnEntry[]> {
  const file = basename(path);
  const hash = await options.store.place(path, options.signal);
  const { size } = await stat(path).catch(() => ({ size: 0 }));
  const entries: OwnEntry[] = [{ type: 'file', rel: file, hash, bytes: size }];
  const scope = await nearestPackageScope(dirname(path));
  // No package.json above the module: none in the copy either (one without a `type` would make
  // Node warn about an ES module where the original gave no warning).
  if (scope !== undefined && file !== 'package.json') {
    const content = JSON.stringify(scope);
    const manifest = await options.store.placeContent(content);
    entries.push({ type: 'file', rel: 'package.json', hash: manifest, bytes: Buffer.byteLength(content) });
  }
  return entries.sort((a, b) => (a.rel < b.rel ? -1 : 1));
}

/** A content fingerprint of own entries. */
export function ownFingerprint(entries: readonly OwnEntry[]): string {
  const hash = createHash('sha256');
  for (const entry of entries) {
    if (entry.type === 'dir') hash.update(`d ${entry.rel}\n`);
    else if (entry.type === 'link') hash.update(`l ${entry.rel} ${entry.target}\n`);
    else hash.update(`f ${entry.rel} ${entry.hash}\n`);
  }
  return hash.digest('hex');
}

/**
 * An identity fingerprint of a dependency tree: paths, inodes, sizes, modification and change
 * times. Loading never links or touches the package's files, so the change time moves only when a
 * file is really written (and no program can set it back), which makes an unchanged fingerprint
 * mean unchanged contents.
 */
export function dependencyFingerprint(entries: readonly TreeEntry[]): string {
  const hash = createHash('sha256');
  for (const entry of entries) {
    if (entry.type === 'dir') hash.update(`d ${entry.rel}\n`);
    else if (entry.type === 'link') hash.update(`l ${entry.rel} ${entry.target}\n`);
    else {
      const { ino, size, mtimeNs, ctimeNs } = entry.identity;
      hash.update(`f ${entry.rel} ${ino} ${size} ${mtimeNs} ${ctimeNs}\n`);
    }
  }
  return hash.digest('hex');
}

/**
 * Makes the folders among `entries` under `base`, each level at once after the one above it
 * (entries are listed a folder before what it holds).
 */
export async function makeFolders(
  base: string,
  entries: readonly TreeEntry[] | readonly OwnEntry[],
): Promise<void> {
  const levels: string[][] = [];
  for (const entry of entries) {
    if (entry.type !== 'dir') continue;
    const depth = entry.rel.split('/').length - 1;
    const level = levels[depth] ?? [];
    level.push(entry.rel);
    levels[depth] = level;
  }
  for (const level of levels)
    if (level !== undefined) await forEachLimit(level, 16, (rel) => mkdir(join(base, rel)));
}

/** Runs `task` over `items`, at most `limit` at once (each may open a file). */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

function identityOf(info: BigIntStats): FileIdentity {
  return { ino: info.ino, size: info.size, mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs };
}

function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** What `read` returns, or undefined when what it reads is gone (or is no folder any more). */
function unlessGone<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** A snapshot's `files` (see layout.ts): each own file's digest, each link's, and node_modules' as one. */
export function fileDigests(
  own: readonly OwnEntry[],
  dependencyPrint: string | undefined,
): Record<string, string> | undefined {
  const files: Record<string, string> = {};
  let count = 0;
  for (const entry of own) {
    if (entry.type === 'dir') continue;
    if (++count > MAX_FILE_DIGESTS) return undefined;
    files[entry.rel] =
      entry.type === 'file'
        ? `sha256:${entry.hash}`
        : `sha256:${createHash('sha256').update(`link ${entry.target}`).digest('hex')}`;
  }
  if (dependencyPrint !== undefined) files['node_modules'] = `sha256:${dependencyPrint}`;
  return files;
}
