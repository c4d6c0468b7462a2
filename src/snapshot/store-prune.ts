/**
 * Keeping the snapshot store within its size bound: the records least recently used go first, and
 * with them the copies no remaining record names. Safe beside other processes using the store:
 * a copy removed under a snapshot that links it leaves the snapshot's link (its own name for the
 * same inode) intact, and a process that wanted the copy finds it gone and copies the file again.
 */
import { lstat, readdir, readFile, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type FileStore, RECORD_NAME, UNSETTLED } from './file-store.js';

/**
 * A copy no record names is left alone this long: another process may have just placed it and
 * not yet written the record that names it.
 */
const ORPHAN_GRACE_MS = 10 * 60_000;
/** Temporary files older than this were left by a process that ended mid-write. */
const STALE_TEMPORARY_MS = 60 * 60_000;

interface RecordFile {
  path: string;
  key: string;
  bytes: number;
  usedMs: number;
}

/**
 * Prunes `store` to `maxBytes`, first removing the kept trees (kept-trees.ts) that `sweepKeptTrees`
 * finds unused. The records' own sizes (in their names) are summed first: that
 * sum is at least what the copies hold (copies shared between records count once per record), so
 * a store under it is left without walking its copies.
 */
export async function pruneStore(
  store: FileStore,
  maxBytes: number,
  sweepKeptTrees: () => Promise<void> = async () => {},
): Promise<void> {
  const records = await listRecords(store.folder);
  const claimed = records.reduce((sum, record) => sum + record.bytes, 0);
  if (claimed <= maxBytes && store.addedBytes <= maxBytes) return;
  // A kept tree's files are links to the copies: unlinking a copy frees nothing while one holds it.
  await sweepKeptTrees();

  const copies = await listCopies(store.folder);
  const now = Date.now();
  let total = 0;
  for (const copy of copies.values()) total += copy.bytes;
  if (total <= maxBytes) return;

  const names = new Map<string, string[]>();
  const refs = new Map<string, number>();
  for (const record of records) {
    const hashes = await hashesOf(record.path);
    names.set(record.path, hashes);
    for (const hash of hashes) refs.set(hash, (refs.get(hash) ?? 0) + 1);
  }
  const remove = async (hash: string) => {
    const copy = copies.get(hash);
    if (copy === undefined) return;
    copies.delete(hash);
    await unlink(copy.path).catch(() => {});
    total -= copy.bytes;
  };
  for (const [hash, copy] of copies) {
    if (total <= maxBytes) return;
    if (!refs.has(hash) && now - copy.writtenMs > ORPHAN_GRACE_MS) await remove(hash);
  }
  // Least recently used first.
  for (const record of records.sort((a, b) => a.usedMs - b.usedMs)) {
    if (total <= maxBytes) return;
    await rm(record.path, { force: true });
    for (const hash of names.get(record.path) ?? []) {
      const left = (refs.get(hash) ?? 1) - 1;
      refs.set(hash, left);
      if (left === 0) await remove(hash);
    }
  }
}

async function listRecords(folder: string): Promise<RecordFile[]> {
  const trees = join(folder, 'trees');
  const names = await readdir(trees).catch(() => [] as string[]);
  const records: RecordFile[] = [];
  for (const name of names) {
    const path = join(trees, name);
    const info = await stat(path).catch(() => undefined);
    if (info === undefined) continue;
    const match = RECORD_NAME.exec(name);
    if (match === null) {
      if (name.startsWith('.tmp-') && Date.now() - info.mtimeMs > STALE_TEMPORARY_MS)
        await unlink(path).catch(() => {});
      continue;
    }
    records.push({ path, key: match[1] as string, bytes: Number(match[2]), usedMs: info.mtimeMs });
  }
  return records;
}

async function listCopies(
  folder: string,
): Promise<Map<string, { path: string; bytes: number; writtenMs: number }>> {
  const files = join(folder, 'files');
  const copies = new Map<string, { path: string; bytes: number; writtenMs: number }>();
  for (const prefix of await readdir(files).catch(() => [] as string[])) {
    const bucket = join(files, prefix);
    for (const name of await readdir(bucket).catch(() => [] as string[])) {
      const path = join(bucket, name);
      const info = await lstat(path).catch(() => undefined);
      if (info === undefined || !info.isFile()) continue;
      if (name.startsWith('.tmp-')) {
        if (Date.now() - info.mtimeMs > STALE_TEMPORARY_MS) await unlink(path).catch(() => {});
        continue;
      }
      copies.set(name, { path, bytes: info.size, writtenMs: info.mtimeMs });
    }
  }
  return copies;
}

async function hashesOf(path: string): Promise<string[]> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return [];
    return Object.values(parsed).flatMap((value) =>
      typeof value === 'string' ? [value.startsWith(UNSETTLED) ? value.slice(UNSETTLED.length) : value] : [],
    );
  } catch {
    return [];
  }
}
