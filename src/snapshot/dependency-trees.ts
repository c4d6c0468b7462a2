/**
 * The snapshots' dependency trees: one per state of a package's `node_modules` (its files'
 * identities), made of hard links to the installed files and shared by every version of the
 * package that has that state, so a change of a tool file links nothing again.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileStore } from './file-store.js';
import { linkTarget, slug } from './layout.js';
import { forEachLimit, listTree, type TreeEntry } from './package-scan.js';

/** A package's installed dependencies as listed for a snapshot. */
export interface Dependencies {
  /** The real path of the package's node_modules. */
  base: string;
  entries: TreeEntry[];
}

export interface DependencyTree {
  /** Holds `node_modules/` and the version folders that use it. */
  readonly folder: string;
  readonly key: string;
  refs: number;
  /** Store copies it links (dependency files copied across file systems). */
  hashes: string[];
  /** Settles once the tree is built (or failed to be). */
  ready: Promise<void>;
}

/** The package's node_modules as it is now, or undefined when it has none. */
export async function listDependencies(root: string, signal: AbortSignal): Promise<Dependencies | undefined> {
  const base = await realpath(join(root, 'node_modules')).catch(() => undefined);
  if (base === undefined) return undefined;
  return { base, entries: await listTree(base, () => false, signal) };
}

export class DependencyTrees {
  readonly #folder: string;
  readonly #store: FileStore;
  readonly #track: (work: Promise<unknown>) => unknown;
  readonly #trees = new Map<string, DependencyTree>();
  #counter = 0;

  constructor(folder: string, store: FileStore, track: (work: Promise<unknown>) => unknown) {
    this.#folder = folder;
    this.#store = store;
    this.#track = track;
  }

  /** The tree of `root` for this fingerprint (`print`), linked now if no version holds it yet. */
  async take(
    root: string,
    print: string,
    dependencies: Dependencies | undefined,
    signal: AbortSignal,
  ): Promise<DependencyTree> {
    const key = `${root}\0${print}`;
    const known = this.#trees.get(key);
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
      folder: join(this.#folder, slug(root), `nm-${print.slice(0, 16)}-${++this.#counter}`),
      key,
      refs: 1,
      hashes: [],
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
      await this.#build(tree, root, dependencies, signal);
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
    this.#track(
      rm(tree.folder, { recursive: true, force: true, maxRetries: 2 }).then(() =>
        this.#store.collect(tree.hashes),
      ),
    );
  }

  async #build(
    tree: DependencyTree,
    root: string,
    dependencies: Dependencies | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    // Built aside and renamed into place: a tree appears whole or not at all.
    const building = `${tree.folder}.tmp-${randomBytes(4).toString('hex')}`;
    await mkdir(building, { recursive: true });
    const installed = dependencies?.entries.some((entry) => entry.rel === 'toolhost') ?? false;
    if (!installed) await writeAuthorHelpers(join(building, 'node_modules', 'toolhost'));
    if (dependencies !== undefined) {
      const modules = join(building, 'node_modules');
      await mkdir(modules, { recursive: true });
      const layout = { root, version: '', dependencies: modules, base: dependencies.base };
      for (const entry of dependencies.entries)
        if (entry.type === 'dir') await mkdir(join(modules, entry.rel));
      await forEachLimit(dependencies.entries, 16, async (entry) => {
        signal.throwIfAborted();
        const destination = join(modules, entry.rel);
        if (entry.type === 'link') await symlink(linkTarget(layout, entry, 'dependency'), destination);
        else if (entry.type === 'file')
          await this.#link(join(dependencies.base, entry.rel), destination, tree, signal);
      });
    }
    await rename(building, tree.folder);
  }

  /**
   * Installed files are hard-linked, not copied: package managers replace a file rather than edit
   * it, so the link keeps the version that was read. Across file systems (or where links are
   * refused) the file is copied into the store instead.
   */
  async #link(source: string, destination: string, tree: DependencyTree, signal: AbortSignal): Promise<void> {
    try {
      await link(source, destination);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw error;
    }
    for (let attempt = 1; ; attempt++) {
      const hash = await this.#store.place(source, signal);
      tree.hashes.push(hash);
      // False only when another release collected the copy in between: place it again.
      if ((await this.#store.linkTo(hash, destination)) || attempt >= 3) return;
    }
  }
}

/** The author helpers (`toolhost/tool`) of the host itself. */
const AUTHOR_HELPERS = new URL('../tool-module.js', import.meta.url).href;

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
