/**
 * Package folders for snapshot tests: a node_modules built from real installed packages (copied
 * from this repository's own node_modules, as `npm install` would lay them out), and what every
 * file of a folder is on disk, to show that loading changed none of them.
 */
import { cp, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from './cli-run.js';

/** Copies the installed packages `names` from this repository's node_modules into `folder`'s. */
export async function installFromRepo(folder: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    await cp(join(REPO, 'node_modules', name), join(folder, 'node_modules', name), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
}

/** Every entry under `folder` with what a write would change: size, times, link count, inode. */
export async function fileStates(folder: string): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  const visit = async (path: string, rel: string): Promise<void> => {
    const info = await lstat(path, { bigint: true });
    states.set(
      rel,
      `${info.mode} size ${info.size} mtime ${info.mtimeNs} ctime ${info.ctimeNs} links ${info.nlink} inode ${info.ino}`,
    );
    if (info.isDirectory())
      for (const name of await readdir(path))
        await visit(join(path, name), rel === '' ? name : `${rel}/${name}`);
  };
  await visit(folder, '');
  return states;
}

/** The entries whose state differs between two {@link fileStates} (empty when nothing changed). */
export function changedEntries(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [rel, state] of before)
    if (after.get(rel) !== state) changed.push(`${rel}: ${state} -> ${after.get(rel)}`);
  for (const rel of after.keys()) if (!before.has(rel)) changed.push(`${rel}: added`);
  return changed;
}
