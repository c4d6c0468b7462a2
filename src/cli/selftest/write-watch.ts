/**
 * Detects files written outside a selftest's tmpDir: a snapshot (kind, size, mtime, ctime, inode of
 * every entry) of the places a careless selftest writes to, taken before and after, then compared.
 * It detects; it does not prevent (the strict isolation tier is what blocks such writes). A file
 * written and removed again between the two snapshots goes unseen.
 */
import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isWithin } from '../../shared/paths.js';

/** Where a write happened, for the report. */
export type WatchedPlace = 'package' | 'working-directory' | 'data-dir' | 'launch-directory';

export interface WatchRoot {
  path: string;
  place: WatchedPlace;
  /** Only the root's own entries (0), or the whole tree (undefined). */
  depth?: 0 | undefined;
  /** Top-level names under the root that are not compared (the host's own files). */
  ignore?: readonly string[] | undefined;
  /** Where the root's writes are reported: a host's snapshot of a package reports as the package. */
  shownAs?: string | undefined;
}

interface Entry {
  kind: 'file' | 'dir' | 'other';
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

interface RootSnapshot {
  root: WatchRoot;
  entries: Map<string, Entry>;
  /** False when the walk stopped at the entry cap (the rest was not compared). */
  complete: boolean;
}

export interface Snapshot {
  roots: RootSnapshot[];
}

export interface DetectedWrite {
  /** The absolute path. */
  path: string;
  /** The path relative to its watched root. */
  relativePath: string;
  place: WatchedPlace;
  change: 'created' | 'modified' | 'deleted';
  kind: Entry['kind'];
  /** The entry's modification time (for created and modified entries). */
  mtimeMs: number | undefined;
}

/** Entries walked per root at most: a package with a huge node_modules is compared in part. */
export const MAX_ENTRIES_PER_ROOT = 50_000;

/** Drops duplicates and roots that a whole-tree root already covers. */
export function distinctRoots(roots: readonly WatchRoot[]): WatchRoot[] {
  const wholeTreesFirst = [...roots].sort((a, b) => Number(a.depth === 0) - Number(b.depth === 0));
  const kept: WatchRoot[] = [];
  for (const root of wholeTreesFirst) {
    if (kept.some((other) => other.path === root.path)) continue;
    if (roots.some((other) => other.depth === undefined && isBelow(other.path, root.path))) continue;
    kept.push(root);
  }
  return kept;
}

export async function takeSnapshot(roots: readonly WatchRoot[]): Promise<Snapshot> {
  return { roots: await Promise.all(roots.map(snapshotRoot)) };
}

async function snapshotRoot(root: WatchRoot): Promise<RootSnapshot> {
  const entries = new Map<string, Entry>();
  let complete = true;
  const walk = async (folder: string, depth: number): Promise<void> => {
    let children: Dirent[];
    try {
      children = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const child of children) {
      if (entries.size >= MAX_ENTRIES_PER_ROOT) {
        complete = false;
        return;
      }
      const path = join(folder, child.name);
      const relativePath = relative(root.path, path);
      if (depth === 0 && root.ignore?.includes(child.name)) continue;
      let stats: Stats;
      try {
        stats = await lstat(path);
      } catch {
        continue;
      }
      const kind = stats.isFile() ? 'file' : stats.isDirectory() ? 'dir' : 'other';
      entries.set(relativePath, {
        kind,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        ctimeMs: stats.ctimeMs,
        ino: stats.ino,
      });
      if (kind === 'dir' && root.depth === undefined) await walk(path, depth + 1);
    }
  };
  await walk(root.path, 0);
  return { root, entries, complete };
}

/** What changed between two snapshots of the same roots; a created or deleted folder hides its contents. */
export function findWrites(before: Snapshot, after: Snapshot): DetectedWrite[] {
  const writes: DetectedWrite[] = [];
  after.roots.forEach((now, index) => {
    const then = before.roots[index];
    if (then === undefined) return;
    const report = (relativePath: string, entry: Entry, change: DetectedWrite['change']) => {
      writes.push({
        path: join(now.root.shownAs ?? now.root.path, relativePath),
        relativePath,
        place: now.root.place,
        change,
        kind: entry.kind,
        mtimeMs: change === 'deleted' ? undefined : latestChange(now.entries, relativePath, entry),
      });
    };
    for (const [path, entry] of now.entries) {
      const old = then.entries.get(path);
      if (old === undefined) {
        if (!hasNew(now.entries, then.entries, path)) report(path, entry, 'created');
      } else if (old.kind !== entry.kind) {
        report(path, entry, 'modified');
      } else if (
        entry.kind !== 'dir' &&
        (old.size !== entry.size ||
          old.mtimeMs !== entry.mtimeMs ||
          old.ctimeMs !== entry.ctimeMs ||
          old.ino !== entry.ino)
      ) {
        report(path, entry, 'modified');
      }
    }
    for (const [path, entry] of then.entries) {
      // An entry past the cap of an incomplete walk is not known to be gone.
      if (!now.entries.has(path) && now.complete && !hasNew(then.entries, now.entries, path)) {
        report(path, entry, 'deleted');
      }
    }
  });
  return writes.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * When an entry last changed: a file's mtime; for a folder, the latest mtime inside it (writing to
 * a file that already exists does not touch its folder's mtime).
 */
function latestChange(entries: Map<string, Entry>, path: string, entry: Entry): number {
  if (entry.kind !== 'dir') return entry.mtimeMs;
  let latest = entry.mtimeMs;
  const prefix = `${path}${sep}`;
  for (const [other, inside] of entries) {
    if (other.startsWith(prefix) && inside.mtimeMs > latest) latest = inside.mtimeMs;
  }
  return latest;
}

/** Is an ancestor folder of `path` in `inThis` but not in `notInThat` (so it is reported instead)? */
function hasNew(inThis: Map<string, Entry>, notInThat: Map<string, Entry>, path: string): boolean {
  const parts = path.split(sep);
  for (let length = 1; length < parts.length; length++) {
    const ancestor = parts.slice(0, length).join(sep);
    if (inThis.has(ancestor) && !notInThat.has(ancestor)) return true;
  }
  return false;
}

/** Below `folder`, not `folder` itself. */
function isBelow(folder: string, path: string): boolean {
  return path !== folder && isWithin(folder, path);
}
