/**
 * The snapshots' dependency trees: one per state of what a package's tools can import from its
 * `node_modules` (see dependency-closure.ts), made of links to the store's copies and shared by every
 * version of the package that has that state, so a change of a tool file copies nothing again. The
 * store remembers, by the files' identities, which copy each file was: a later run (another process)
 * with the same `node_modules` links the copies without reading a file. A closure too large to link
 * on every run is linked once into the store and kept there (kept-trees.ts): a host's tree then
 * holds one link to it.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { srcFile } from '../own-files.js';
import type { Dependencies } from './dependency-closure.js';
import { type FileStore, type StoreRecord, UNSETTLED } from './file-store.js';
import { KEPT_TREE_MIN_ENTRIES, KeptTrees, whole as wholeKeptTree } from './kept-trees.js';
import { buildingFolder, treeFolder } from './layout.js';
import { linkTarget } from './links.js';
import { forEachLimit, makeFolders, settled } from './package-scan.js';

export interface DependencyTree {
  /** Holds `node_modules/` and the version folders that use it. */
  readonly folder: string;
  readonly key: string;
  refs: number;
  /** Settles once the tree is built (or failed to be). */
  ready: Promise<void>;
  /**
   * The tree kept in the store that this one's `node_modules` leads to (kept-trees.ts), for a
   * closure too large to link per host: readable wherever the tree is.
   */
  kept?: string | undefined;
}

export class DependencyTrees {
  readonly #folder: string;
  readonly #store: FileStore;
  readonly #track: (work: Promise<unknown>) => unknown;
  readonly #trees = new Map<string, DependencyTree>();
  readonly #kept: KeptTrees;
  #counter = 0;

  constructor(folder: string, store: FileStore, track: (work: Promise<unknown>) => unknown) {
    this.#folder = folder;
    this.#store = store;
    this.#track = track;
    this.#kept = new KeptTrees(() => store.folder);
  }

  /**
   * Lets go of the kept trees this host's trees still hold (`close`: the host's folder, with the
   * trees in it, is removed whole after).
   */
  async close(): Promise<void> {
    const trees = [...this.#trees.values()];
    this.#trees.clear();
    for (const tree of trees) {
      const { kept } = tree;
      // Let go once: a release of the tree after this one has nothing of it to let go.
      tree.kept = undefined;
      if (kept !== undefined) await this.#kept.release(kept);
    }
  }

  /** Removes the kept trees unused for `unusedMs` that no living host holds (a store over its bound). */
  sweepKept(unusedMs: number): Promise<void> {
    return this.#kept.sweep(unusedMs);
  }

  /** The tree of `root` for this fingerprint (`print`), linked now if no version holds it yet. */
  async take(
    root: string,
    print: string,
    dependencies: Dependencies | undefined,
    signal: AbortSignal,
  ): Promise<DependencyTree> {
    const key = `${root}\0${print}`;
    let known = this.#trees.get(key);
    // A kept tree removed from under this host (the store removed by hand) is built again; the
    // versions that still hold the old tree let go of it as before.
    if (known?.kept !== undefined && !(await wholeKeptTree(known.kept)) && this.#trees.get(key) === known) {
      this.#trees.delete(key);
      known = undefined;
    }
    if (known !== undefined) {
      known.refs += 1;
      try {
        await known.ready;
        return known;
      } catch (error) {
        this.release(known);
        throw error;
      }
    }
    let ready: () => void = () => {};
    let failed: (error: unknown) => void = () => {};
    const tree: DependencyTree = {
      folder: treeFolder(this.#folder, root, print, ++this.#counter),
      key,
      refs: 1,
      ready: new Promise<void>((resolve, reject) => {
        ready = resolve;
        failed = reject;
      }),
    };
    // Registered before it is built: a version taken meanwhile waits for the same tree.
    tree.ready.catch(() => {});
    this.#trees.set(key, tree);
    try {
      signal.throwIfAborted();
      await this.#build(tree, root, print, dependencies, signal);
      ready();
      return tree;
    } catch (error) {
      if (this.#trees.get(key) === tree) this.#trees.delete(key);
      failed(error);
      this.release(tree);
      throw error;
    }
  }

  /** Lets go of one `take`; the last one removes the tree. */
  release(tree: DependencyTree): void {
    if (--tree.refs > 0) return;
    if (this.#trees.get(tree.key) === tree) this.#trees.delete(tree.key);
    const removed = rm(tree.folder, { recursive: true, force: true, maxRetries: 2 });
    const { kept } = tree;
    this.#track(kept === undefined ? removed : removed.finally(() => this.#kept.release(kept)));
  }

  async #build(
    tree: DependencyTree,
    root: string,
    print: string,
    dependencies: Dependencies | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    // Built aside and renamed into place: a tree appears whole or not at all.
    const building = buildingFolder(tree.folder);
    await mkdir(building, { recursive: true });
    const keptKey = keptTreeKey(print, dependencies);
    const kept =
      keptKey === undefined ? undefined : await this.#keptTree(keptKey, root, print, dependencies, signal);
    if (kept === undefined)
      await this.#fill(join(building, 'node_modules'), root, print, dependencies, signal);
    else {
      tree.kept = kept;
      // Absolute: the sandbox binds the kept tree at its own path.
      await symlink(join(kept, 'node_modules'), join(building, 'node_modules'));
    }
    await rename(building, tree.folder);
  }

  /**
   * The kept tree `key`, built now if the store has none; undefined when the store can't hold it
   * (a store that can't be written, a full disk): the host then links a tree of its own, as for a
   * small closure.
   */
  async #keptTree(
    key: string,
    root: string,
    print: string,
    dependencies: Dependencies | undefined,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    try {
      return await this.#kept.take(key, (folder) =>
        this.#fill(join(folder, 'node_modules'), root, print, dependencies, signal),
      );
    } catch {
      signal.throwIfAborted();
      return undefined;
    }
  }

  /** Makes `modules` (a tree's `node_modules`): the closure's files from the store, its links, its folders. */
  async #fill(
    modules: string,
    root: string,
    print: string,
    dependencies: Dependencies | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const installed = dependencies?.entries.some((entry) => entry.rel === 'toolhost') ?? false;
    if (!installed) await writeAuthorHelpers(join(modules, 'toolhost'));
    if (dependencies === undefined) return;
    await mkdir(modules, { recursive: true });
    const layout = { root, version: '', dependencies: modules, base: dependencies.base };
    await makeFolders(modules, dependencies.entries);
    const key = `nm-${print.slice(0, 32)}`;
    const known = (await this.#store.readRecord(key)) ?? {};
    const record: StoreRecord = Object.create(null);
    const now = Date.now();
    let bytes = 0;
    let copied = 0;
    await forEachLimit(dependencies.entries, 16, async (entry) => {
      signal.throwIfAborted();
      const destination = join(modules, entry.rel);
      if (entry.type === 'link') await symlink(linkTarget(layout, entry, 'dependency'), destination);
      else if (entry.type === 'file') {
        const source = join(dependencies.base, entry.rel);
        const remembered = Object.hasOwn(known, entry.rel) ? known[entry.rel] : undefined;
        const hash = await this.#place(source, remembered, destination, signal);
        if (hash === undefined) return;
        if (hash !== remembered) copied += 1;
        bytes += Number(entry.identity.size);
        // A file changed within a tick of the clock before it was read may keep its identity
        // with other bytes: its copy is recorded (for the store's bound) but not reused.
        record[entry.rel] = settled(entry.identity, now) ? hash : `${UNSETTLED}${hash}`;
      }
    });
    // Reading the record marked it used; it is written only when it learnt something.
    if (copied > 0) await this.#store.writeRecord(key, record, bytes);
  }

  /**
   * One installed file, from the store: the copy the store remembers for it (`known`), else copied
   * into the store now. Never a link to the installed file: loading must leave the package as it
   * was, its files' link counts and change times included. Undefined when the file is gone.
   */
  async #place(
    source: string,
    known: string | undefined,
    destination: string,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    if (known !== undefined && (await this.#store.linkTo(known, destination))) return known;
    for (let attempt = 1; ; attempt++) {
      let hash: string;
      try {
        hash = await this.#store.place(source, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      // False only when the copy was pruned (or the store removed) in between: place it again.
      if (await this.#store.linkTo(hash, destination)) return hash;
      if (attempt >= 3) throw new Error(`the snapshot store lost ${source} three times while it was copied`);
    }
  }
}

/** The author helpers (`toolhost/tool`) of the host itself. */
const AUTHOR_HELPERS = srcFile('tool-module.js').href;

/** Changes when what a kept tree holds for the same key changes (how a tree is laid out). */
const KEPT_TREE_FORMAT = 'kept-tree-1';

/**
 * The key of the tree kept in the store for this closure, or undefined when it is linked per host:
 * a small one, one with no node_modules of its own, or one holding a file too fresh for its identity
 * to name its content (see package-scan.ts's `settled`). The key names everything the tree follows
 * from: every path, file identity and link text (the fingerprint), where the links that lead out
 * point from (the node_modules' real path) and the author helpers a tree without toolhost gets.
 */
function keptTreeKey(print: string, dependencies: Dependencies | undefined): string | undefined {
  if (dependencies === undefined || dependencies.outside !== undefined) return undefined;
  if (dependencies.entries.length <= KEPT_TREE_MIN_ENTRIES) return undefined;
  const now = Date.now();
  if (!dependencies.entries.every((entry) => entry.type !== 'file' || settled(entry.identity, now)))
    return undefined;
  return createHash('sha256')
    .update(JSON.stringify([KEPT_TREE_FORMAT, print, dependencies.base, AUTHOR_HELPERS]))
    .digest('hex');
}

/**
 * `toolhost/tool` for a snapshot whose package does not install toolhost itself: tool packages
 * usually take it as a peer dependency, installed beside the host rather than inside the package,
 * where a snapshot can't see it. The host's own helpers stand in (plain, dependency-free code that
 * the strict tier may read anyway).
 */
async function writeAuthorHelpers(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ name: 'toolhost', type: 'module', exports: { './tool': './tool.js' } }),
  );
  await writeFile(join(folder, 'tool.js'), `export * from ${JSON.stringify(AUTHOR_HELPERS)};\n`);
}
