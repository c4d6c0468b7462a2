/**
 * Large dependency trees kept in the store across runs, so that a later `toolhost list`, `call` or
 * `serve` of a package with thousands of installed files neither links them all again nor removes
 * them all at its end:
 *
 *   <store>/kept-trees/<key>/node_modules/…     one tree: hard links to the store's copies
 *   <store>/kept-trees/<key>.holders/<pid>      a living host that holds it (never swept under it)
 *   <store>/kept-trees/<key>.tmp-<hex>          one being built or removed
 *
 * A tree's key names everything its content follows from: the closure's fingerprint (each file's
 * path and identity, each link's text), where the package's node_modules is, and the host's own
 * author helpers. Only a tree whose every file was settled when it was listed is kept (see
 * package-scan.ts's `settled`): the same rule by which the store's records already reuse a copy
 * for a file by its identity, so a kept tree is trusted for exactly what the store's records are.
 * A tree appears whole or not at all (built aside, renamed), and no host changes one after that.
 *
 * What can write the store folder can write a kept tree, as it can the store's copies (which the
 * tree's files are) and the package's own node_modules: a tool in the `worker` tier. The `strict`
 * and `process` tiers read a kept tree and can't write it.
 *
 * Removal (the sweep): a tree no living host holds and none used for {@link UNUSED_MS}, or, when
 * the store is over its size bound, for {@link PRUNE_UNUSED_MS} (its files keep the copies'
 * bytes on disk after pruning unlinks them).
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rename, rm, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isAlive } from '../host/pid-alive.js';

const KEPT_TREES = 'kept-trees';
const HOLDERS = '.holders';
const BUILDING = '.tmp-';
const KEY = /^[0-9a-f]{64}$/;
/** Trees unused this long go at the next sweep. */
export const UNUSED_MS = 7 * 24 * 60 * 60_000;
/** When the store is over its bound, trees unused this long go too. */
export const PRUNE_UNUSED_MS = 10 * 60_000;
/** A folder still being built (or removed) this old was left by a process that ended mid-way. */
const STALE_BUILDING_MS = 60 * 60_000;

/**
 * A closure with more entries than this is kept in the store; a smaller one is linked per host as
 * before (it takes milliseconds, and a spare process can mirror it: process/pool/spare-mirror.ts).
 */
export const KEPT_TREE_MIN_ENTRIES = 2000;

/** Takes of each kept tree (by folder) in this process, over all its hosts: its holder mark is one. */
const heldHere = new Map<string, number>();
/** The last change of each tree's holder mark in flight: marks are made and removed in order. */
const markingHere = new Map<string, Promise<void>>();

/** Runs `change` of `folder`'s holder mark after the changes before it. */
function inOrder(folder: string, change: () => Promise<void>): Promise<void> {
  const done = (markingHere.get(folder) ?? Promise.resolve()).then(change);
  const settled = done.catch(() => {});
  markingHere.set(folder, settled);
  void settled.then(() => {
    if (markingHere.get(folder) === settled) markingHere.delete(folder);
  });
  return done;
}

/** Kept trees (by folder) being looked for or built by a host of this process. */
const readyingHere = new Map<string, Promise<void>>();

export class KeptTrees {
  readonly #storeFolder: () => string;
  #swept = false;

  /** `storeFolder`: the store's folder now (it moves to a host's own when the store can't be written). */
  constructor(storeFolder: () => string) {
    this.#storeFolder = storeFolder;
  }

  /**
   * The folder of the kept tree `key` (it holds `node_modules/`), built by `build` into a fresh
   * folder when no whole one is there. Each `take` is matched by one {@link release}.
   */
  async take(key: string, build: (folder: string) => Promise<void>): Promise<string> {
    if (!KEY.test(key)) throw new Error(`a kept tree's key is 64 hex digits, got ${key}`);
    const root = join(this.#storeFolder(), KEPT_TREES);
    const folder = join(root, key);
    heldHere.set(folder, (heldHere.get(folder) ?? 0) + 1);
    try {
      // Held before it is looked at: a sweep that finds it unheld afterwards gives it back (see
      // sweepKeptTrees).
      await inOrder(folder, () => hold(root, key));
      await readyOnce(folder, build);
      const now = new Date();
      await utimes(folder, now, now).catch(() => {});
    } catch (error) {
      await this.release(folder);
      throw error;
    }
    this.#sweepOnce(root);
    return folder;
  }

  /** Lets go of one `take`: the last one of this process removes its holder mark. */
  async release(folder: string): Promise<void> {
    const refs = (heldHere.get(folder) ?? 0) - 1;
    if (refs > 0) {
      heldHere.set(folder, refs);
      return;
    }
    heldHere.delete(folder);
    await inOrder(folder, () => unlink(holderFile(join(folder, '..'), basename(folder))).catch(() => {}));
  }

  /** Sweeps the store's kept trees with `unusedMs` (for a store over its bound). */
  sweep(unusedMs: number): Promise<void> {
    return sweepKeptTrees(join(this.#storeFolder(), KEPT_TREES), unusedMs);
  }

  /** Once per process, in the background: trees unused for a week go. */
  #sweepOnce(root: string): void {
    if (this.#swept) return;
    this.#swept = true;
    void sweepKeptTrees(root, UNUSED_MS).catch(() => {});
  }
}

async function hold(root: string, key: string): Promise<void> {
  const file = holderFile(root, key);
  try {
    await writeFile(file, '');
  } catch {
    await mkdir(join(root, `${key}${HOLDERS}`), { recursive: true });
    await writeFile(file, '');
  }
}

/**
 * The whole tree at `folder`, readied once in this process at a time. A build another host of this
 * process began and gave up (it closed) is begun again by this one.
 */
async function readyOnce(folder: string, build: (folder: string) => Promise<void>): Promise<void> {
  const other = readyingHere.get(folder);
  if (
    other !== undefined &&
    (await other.then(
      () => true,
      () => false,
    ))
  )
    return;
  const readying = ready(folder, build).finally(() => {
    if (readyingHere.get(folder) === readying) readyingHere.delete(folder);
  });
  readyingHere.set(folder, readying);
  await readying;
}

/** The whole tree at `folder`, built aside by `build` and renamed there if it is not there yet. */
async function ready(folder: string, build: (folder: string) => Promise<void>): Promise<void> {
  if (await whole(folder)) return;
  const building = `${folder}${BUILDING}${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(building, { recursive: true });
    await build(building);
    await rename(building, folder);
  } catch (error) {
    await rm(building, { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
    // Another process put the same tree there first: its is as good.
    if (await whole(folder)) return;
    throw error;
  }
}

/**
 * Removes the kept trees under `root` unused for `unusedMs` that no living host holds. A tree is
 * renamed aside before it is removed and its holders are looked at again after: a host that began
 * to hold it in between gets it back.
 */
export async function sweepKeptTrees(root: string, unusedMs: number): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const path = join(root, name);
    if (name.includes(BUILDING)) {
      const info = await stat(path).catch(() => undefined);
      if (info !== undefined && now - info.mtimeMs > STALE_BUILDING_MS)
        await rm(path, { recursive: true, force: true }).catch(() => {});
      continue;
    }
    if (name.endsWith(HOLDERS)) {
      // The marks of a tree that is gone (removed by hand, or never made whole): the dead ones go,
      // and the folder with them once it is empty.
      const key = name.slice(0, -HOLDERS.length);
      if (KEY.test(key) && (await stat(join(root, key)).catch(() => undefined)) === undefined)
        if (!(await heldByLiving(root, key))) await rmdir(path).catch(() => {});
      continue;
    }
    if (!KEY.test(name)) continue;
    const info = await stat(path).catch(() => undefined);
    if (info === undefined || now - info.mtimeMs <= unusedMs) continue;
    if (await heldByLiving(root, name)) continue;
    const aside = `${path}${BUILDING}gone-${randomBytes(4).toString('hex')}`;
    if (
      !(await rename(path, aside).then(
        () => true,
        () => false,
      ))
    )
      continue;
    if (await heldByLiving(root, name)) {
      await rename(aside, path).catch(() => {});
      continue;
    }
    await rm(aside, { recursive: true, force: true }).catch(() => {});
    // Its holder marks' folder, when no host began to hold it again meanwhile.
    await rmdir(join(root, `${name}${HOLDERS}`)).catch(() => {});
  }
}

/** Whether a living host holds the tree `key`; the marks of hosts that ended are removed. */
async function heldByLiving(root: string, key: string): Promise<boolean> {
  const folder = join(root, `${key}${HOLDERS}`);
  let living = false;
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    const pid = Number(name);
    if (Number.isSafeInteger(pid) && pid > 0 && (pid === process.pid || isAlive(pid))) living = true;
    else await unlink(join(folder, name)).catch(() => {});
  }
  return living;
}

function holderFile(root: string, key: string): string {
  return join(root, `${key}${HOLDERS}`, String(process.pid));
}

/**
 * Whether a whole kept tree is at `folder` (one appears by rename, with its node_modules): false
 * once it was removed from under a host (the store removed by hand). Both must be
 * folders, not links: a tree is granted by its path, and a link put there would grant where it leads.
 */
export async function whole(folder: string): Promise<boolean> {
  for (const path of [folder, join(folder, 'node_modules')])
    if ((await lstat(path).catch(() => undefined))?.isDirectory() !== true) return false;
  return true;
}
