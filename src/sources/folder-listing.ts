/**
 * Listing a watched folder of packages: which entries are packages (folders, module files, links to
 * either), once the folder has stopped changing.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The packages in a folder: its subfolders, its `.js` / `.mjs` files, and symbolic links to either
 * (a dangling link is listed too, so that `status()` says it dangles). Dot entries and
 * `node_modules` are skipped. The folder is listed once nothing in it changed for `stableMs`
 * (a package caught mid-install waits), or after {@link MAX_STABILITY_CHECKS} tries: what is still
 * half-written then reads as left out, and the watcher reads it again once it changes.
 */
export async function listDirectory(
  directory: string,
  stableMs: number,
  signal: AbortSignal,
): Promise<{ candidates: string[]; linkedFolders: Set<string> }> {
  for (let attempt = 1; ; attempt++) {
    const entries = await readdir(directory, { withFileTypes: true });
    const candidates: string[] = [];
    const linkedFolders = new Set<string>();
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(directory, entry.name);
      const isModule = /\.(m?js)$/.test(entry.name);
      if (entry.isDirectory() || (entry.isFile() && isModule)) {
        candidates.push(path);
      } else if (entry.isSymbolicLink()) {
        const target = await stat(path).catch(() => undefined);
        if (target?.isDirectory()) linkedFolders.add(await realpath(path));
        if (target === undefined || target.isDirectory() || (target.isFile() && isModule))
          candidates.push(path);
      }
    }
    const before = (await Promise.all(candidates.map(fingerprint))).join('\n');
    await sleep(stableMs, undefined, { signal });
    const after = (await Promise.all(candidates.map(fingerprint))).join('\n');
    if (before === after || attempt >= MAX_STABILITY_CHECKS) return { candidates, linkedFolders };
  }
}
const MAX_STABILITY_CHECKS = 50;

/** Sizes and times of a package's manifest and listed modules: what changes while it is written. */
async function fingerprint(path: string): Promise<string> {
  const parts: string[] = [];
  const note = async (file: string) => {
    const info = await stat(file).catch(() => undefined);
    parts.push(info === undefined ? `${file}:-` : `${file}:${info.size}:${info.mtimeMs}`);
  };
  await note(path);
  const manifest = join(path, 'package.json');
  await note(manifest);
  const text = await readFile(manifest, 'utf8').catch(() => '');
  parts.push(text);
  try {
    const tools = (JSON.parse(text) as { toolhost?: { tools?: unknown } }).toolhost?.tools;
    if (Array.isArray(tools)) {
      for (const tool of tools) if (typeof tool === 'string') await note(resolve(path, tool));
    }
  } catch {
    // A manifest that doesn't parse yet is part of the fingerprint as text.
  }
  return parts.join('\n');
}
