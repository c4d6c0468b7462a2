/**
 * A snapshot, mirrored into a spare process's overlay (spares.ts): the same tree at the same path
 * below the overlay, so that inside the sandbox the snapshot is where the host says it is and no
 * path is rewritten. The dependency tree's files are the store's read-only copies: they are linked
 * again. Everything else (the version folders, the package's own files) is copied, as the snapshot
 * itself copies them: a link would change their link count and change time, which `toolhost
 * selftest` watches. Links are made again as they are (a link that led out of the package still
 * does, and the sandbox still has nothing there).
 */
import { copyFile, link, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { forEachLimit, listTree, makeFolders } from '../../snapshot/package-scan.js';

/** A tree larger than this is not mirrored: a process started for it is as fast. */
export const MAX_MIRRORED_ENTRIES = 2000;

/**
 * Mirrors `from` into `to` (which must not exist yet). Resolves `false` when there is nothing to
 * mirror (`from` is not there) or the tree has more than {@link MAX_MIRRORED_ENTRIES} entries;
 * rejects when a file can't be made.
 */
export async function mirrorSnapshot(from: string, to: string): Promise<boolean> {
  const tooLarge = new AbortController();
  let listed = 0;
  const entries = await listTree(
    from,
    () => {
      listed += 1;
      if (listed > MAX_MIRRORED_ENTRIES) tooLarge.abort();
      return false;
    },
    tooLarge.signal,
  ).catch((error: unknown) => {
    if (tooLarge.signal.aborted) return undefined;
    throw error;
  });
  // The walk stops at the next folder once the count passes the limit; a last folder may finish.
  if (entries === undefined || entries.length === 0 || tooLarge.signal.aborted) return false;
  await mkdir(to, { recursive: true });
  await makeFolders(to, entries);
  await forEachLimit(entries, 16, async (entry) => {
    const target = join(to, entry.rel);
    if (entry.type === 'link') await symlink(entry.target, target);
    else if (entry.type === 'file' && entry.rel.split('/').includes('node_modules')) {
      await link(join(from, entry.rel), target).catch(() => copyFile(join(from, entry.rel), target));
    } else if (entry.type === 'file') await copyFile(join(from, entry.rel), target);
  });
  return true;
}
