/**
 * A snapshot, mirrored into a spare process's overlay (spares.ts): the same tree at the same path
 * below the overlay, so that inside the sandbox the snapshot is where the host says it is and no
 * path is rewritten. The dependency tree's files are the store's read-only copies: they are linked
 * again. Everything else (the version folders, the package's own files) is copied, as the snapshot
 * itself copies them: a link would change their link count and change time, which `toolhost
 * selftest` watches. Links are made again as they are (a link that led out of the package still
 * does, and the sandbox still has nothing there).
 */
import { copyFile, link, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A tree larger than this is not mirrored: a process started for it is as fast. */
export const MAX_MIRRORED_ENTRIES = 2000;

/**
 * Mirrors `from` into `to` (which must not exist yet). Resolves `false`, leaving part of it made,
 * when the tree has more than {@link MAX_MIRRORED_ENTRIES} entries; rejects when a file can't be
 * read or made.
 */
export async function mirrorSnapshot(from: string, to: string): Promise<boolean> {
  const budget = { entries: MAX_MIRRORED_ENTRIES };
  await mkdir(to, { recursive: true });
  return mirrorFolder(from, to, false, budget);
}

async function mirrorFolder(
  from: string,
  to: string,
  inDependencies: boolean,
  budget: { entries: number },
): Promise<boolean> {
  const entries = await readdir(from, { withFileTypes: true });
  budget.entries -= entries.length;
  if (budget.entries < 0) return false;
  for (const entry of entries) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      await mkdir(target);
      const dependencies = inDependencies || entry.name === 'node_modules';
      if (!(await mirrorFolder(source, target, dependencies, budget))) return false;
    } else if (entry.isSymbolicLink()) {
      await symlink(await readlink(source), target);
    } else if (entry.isFile()) {
      if (inDependencies) await link(source, target).catch(() => copyFile(source, target));
      else await copyFile(source, target);
    }
  }
  return true;
}
