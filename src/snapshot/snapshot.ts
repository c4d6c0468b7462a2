/**
 * Immutable snapshots of tool packages: what a declaration is read from and what calls run, so a call
 * runs byte for byte the version whose declaration was read, whatever happens to the package on disk.
 *
 *   <store>/files/<2 hex>/<sha256>              one read-only copy per distinct content (file-store.ts),
 *                                               kept across runs under the user's cache folder
 *   <store>/kept-trees/<key>/node_modules/…      a large closure, kept across runs (kept-trees.ts)
 *   <snapshots>/<domain>/nm-<fingerprint>-<n>/   one per state of what the package can import
 *     node_modules/…                             the dependency closure: hard links to the store's copies
 *                                                (for a large closure: a link to its kept tree's)
 *     v-<version>-<n>/…                          one per version: the package's own files, copied from the store
 *
 * Nothing is ever linked to a package's own inode: loading leaves every file of the package as it
 * was, link count and change time included. Own files are copies, not links, even of the store's
 * copies: another process linking the same copy would change their change time and link count, and
 * a version folder is what `toolhost selftest` watches for writes.
 *
 * A version folder sits inside its node_modules folder, so `import 'dep'` from a module walks up
 * and finds the snapshot's own `node_modules`, and a new version of the package's own files reuses an
 * unchanged dependency tree instead of linking it again. A link whose target the copy holds points
 * there; any other stays a link to the original. The snapshot names the first link that would let
 * a tool read outside it (links.ts), so the tiers that confine a tool to its snapshot with Node's
 * permission model, which follows links, can refuse the package. The folder names carry a counter:
 * a version released and taken again gets a new folder, never one that is still being removed.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, symlink } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import { type Dependencies, listDependencyClosure } from './dependency-closure.js';
import { type DependencyTree, DependencyTrees } from './dependency-trees.js';
import { FileStore } from './file-store.js';
import { PRUNE_UNUSED_MS, whole as wholeKeptTree } from './kept-trees.js';
import { buildingFolder, hostStoreFolder, type Snapshot, versionFolder } from './layout.js';
import { linkOut, linkTarget, UnconfinedSnapshotError, unconfinedLink } from './links.js';
import {
  dependencyFingerprint,
  fileDigests,
  forEachLimit,
  HashCache,
  listTree,
  makeFolders,
  type OwnEntry,
  ownFingerprint,
  placeLoneModule,
  placeOwnFiles,
  skipOwn,
} from './package-scan.js';
import { pruneStore } from './store-prune.js';

/** Where the store is and how large it may grow. */
export interface StoreSettings {
  folder: string;
  maxBytes: number;
}

/** A file changed between a snapshot's scan and its copy. */
class ChangedWhileCopied extends Error {}

interface Live {
  snapshot: Snapshot;
  refs: number;
  tree: DependencyTree;
}

export class Snapshots {
  readonly #folder: string;
  readonly #store: FileStore;
  readonly #cache = new HashCache();
  readonly #closing = new AbortController();
  readonly #live = new Map<string, Live>();
  /** Snapshots whose kept tree was removed from under them, replaced in `#live`, still held. */
  readonly #replaced = new Map<Snapshot, Live>();
  readonly #trees: DependencyTrees;
  readonly #building = new Map<string, Promise<unknown>>();
  /** Builds and removals in flight: `close()` waits for them before the folder is removed. */
  readonly #work = new Set<Promise<unknown>>();
  #counter = 0;
  readonly #maxStoreBytes: number;
  #pruning: Promise<void> | undefined;
  /** The store's growth (bytes this process added) when it was last pruned. */
  #prunedAt = 0;

  constructor(folder: string, store: StoreSettings) {
    this.#folder = folder;
    this.#store = new FileStore(store.folder, hostStoreFolder(folder));
    this.#maxStoreBytes = store.maxBytes;
    this.#trees = new DependencyTrees(folder, this.#store, (work) => this.#track(work));
  }

  /**
   * The snapshot of `root` as it is now: the one already held when nothing changed, else a new one.
   * Every `take` is matched by one {@link release}. Rejects with an AbortError once closing, and,
   * for a tool it must `confine` (Node's permission model, which follows links, granting it the
   * snapshot), with an {@link UnconfinedSnapshotError} before anything is made: a version folder
   * holding such a link would sit inside the grant of the versions beside it.
   */
  take(root: string, kind: 'package' | 'module', confine = false): Promise<Snapshot> {
    return this.#track(this.#take(root, kind, confine, this.#closing.signal));
  }

  /** Lets go of one `take`; the last release removes the version's folder. */
  release(snapshot: Snapshot): void {
    const key = `${snapshot.root}\0${snapshot.id}`;
    const replaced = this.#replaced.get(snapshot);
    const live = replaced ?? this.#live.get(key);
    if (live === undefined || live.snapshot !== snapshot || --live.refs > 0) return;
    if (replaced === undefined) this.#live.delete(key);
    else this.#replaced.delete(snapshot);
    void this.#track(this.#remove(live));
  }

  /** Ends every build at its next file and waits for what is in flight. */
  async close(): Promise<void> {
    this.#closing.abort();
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
    await this.#trees.close();
  }

  async #take(
    root: string,
    kind: 'package' | 'module',
    confine: boolean,
    signal: AbortSignal,
  ): Promise<Snapshot> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#takeOnce(root, kind, confine, signal);
      } catch (error) {
        // A file changed between the scan and the copy: scan again (a package being rewritten
        // settles; one rewritten without pause gives up after a few tries).
        if (!(error instanceof ChangedWhileCopied) || attempt >= 5) throw error;
      }
    }
  }

  async #takeOnce(
    root: string,
    kind: 'package' | 'module',
    confine: boolean,
    signal: AbortSignal,
  ): Promise<Snapshot> {
    const own =
      kind === 'package'
        ? await this.#ownFiles(root, signal)
        : await placeLoneModule(root, { store: this.#store, signal });
    const dependencies = kind === 'package' ? await listDependencyClosure(root, signal) : undefined;
    const unconfined = confine ? unconfinedLink(root, own, dependencies) : undefined;
    if (unconfined !== undefined) throw new UnconfinedSnapshotError(unconfined);
    const dependencyPrint = dependencies === undefined ? 'none' : dependencyFingerprint(dependencies.entries);
    const digest = createHash('sha256')
      .update(`${kind}\n${ownFingerprint(own)}\n${dependencyPrint}\n`)
      .digest('hex');
    const id = digest.slice(0, 16);
    const key = `${root}\0${id}`;
    for (;;) {
      const live = this.#live.get(key);
      if (live !== undefined) {
        const intact = await this.#intact(live);
        // Released or replaced meanwhile: look again.
        if (this.#live.get(key) !== live) continue;
        if (intact) {
          live.refs += 1;
          return live.snapshot;
        }
        // Its kept tree was removed from under it: a new snapshot of the same version takes its
        // place, and the old one goes when whoever holds it lets go.
        this.#live.delete(key);
        this.#replaced.set(live.snapshot, live);
        continue;
      }
      const building = this.#building.get(key);
      if (building !== undefined) {
        await building.catch(() => {});
        signal.throwIfAborted();
        continue;
      }
      const build = this.#build({ root, kind, id, digest, own, dependencies, dependencyPrint, signal });
      this.#building.set(key, build);
      try {
        const made = await build;
        made.refs += 1;
        return made.snapshot;
      } finally {
        this.#building.delete(key);
      }
    }
  }

  async #build(plan: {
    root: string;
    kind: 'package' | 'module';
    id: string;
    digest: string;
    own: OwnEntry[];
    dependencies: Dependencies | undefined;
    dependencyPrint: string;
    signal: AbortSignal;
  }): Promise<Live> {
    const { root, id, own, signal } = plan;
    signal.throwIfAborted();
    const tree = await this.#trees.take(root, plan.dependencyPrint, plan.dependencies, signal);
    try {
      const folder = versionFolder(tree.folder, id, ++this.#counter);
      const building = buildingFolder(folder);
      await mkdir(building);
      const layout = { root, version: building, dependencies: join(tree.folder, 'node_modules') };
      await makeFolders(building, own);
      await forEachLimit(own, 16, async (entry) => {
        const destination = join(building, entry.rel);
        if (entry.type === 'link') await symlink(linkTarget(layout, entry, 'own'), destination);
        else if (entry.type === 'file')
          await this.#copyOwn(sourceOf(plan, entry.rel), entry.hash, destination);
      });
      const record = Object.fromEntries(
        own.flatMap((entry) => (entry.type === 'file' ? [[entry.rel, entry.hash]] : [])),
      );
      const bytes = own.reduce((sum, entry) => sum + (entry.type === 'file' ? entry.bytes : 0), 0);
      // What the version used, for the store's bound (its copies go when no record names them).
      await this.#store.writeRecord(`v-${id}`, record, bytes);
      // The version appears whole or not at all.
      await rename(building, folder);
      const out = linkOut(root, own, plan.dependencies);
      const snapshot: Snapshot = {
        id,
        digest: `sha256:${plan.digest}`,
        files: fileDigests(own, plan.dependencies === undefined ? undefined : plan.dependencyPrint),
        root,
        kind: plan.kind,
        folder,
        grant: tree.folder,
        ...(tree.kept === undefined ? {} : { keptTree: tree.kept }),
        ...(out === undefined ? {} : { linkOut: { link: out.link, target: out.target } }),
      };
      const live: Live = { snapshot, refs: 0, tree };
      this.#live.set(`${root}\0${id}`, live);
      this.#pruneWhenGrown();
      return live;
    } catch (error) {
      this.#trees.release(tree);
      throw error;
    }
  }

  /**
   * A store copy copied into a version. The copy may be gone since the scan named it (pruned by
   * another process, or the store removed): the file is placed again, and if its content moved on
   * meanwhile, the scan starts over.
   */
  async #copyOwn(source: string | undefined, hash: string, destination: string): Promise<void> {
    if (await this.#store.copyTo(hash, destination)) return;
    const again =
      source === undefined
        ? undefined
        : await this.#store.place(source, this.#closing.signal).catch(() => undefined);
    if (again !== hash || !(await this.#store.copyTo(hash, destination))) throw new ChangedWhileCopied();
  }

  /** Whether what `live`'s snapshot imports from is still there (a kept tree may be removed by hand). */
  async #intact(live: Live): Promise<boolean> {
    return live.snapshot.keptTree === undefined || (await wholeKeptTree(live.snapshot.keptTree));
  }

  /** Prunes the store in the background once this process has added to it. */
  #pruneWhenGrown(): void {
    if (this.#pruning !== undefined || this.#store.addedBytes === this.#prunedAt) return;
    this.#prunedAt = this.#store.addedBytes;
    this.#pruning = this.#track(
      pruneStore(this.#store, this.#maxStoreBytes, () => this.#trees.sweepKept(PRUNE_UNUSED_MS))
        // The bound is housekeeping: a store that can't be pruned now is pruned by a later run.
        .catch(() => {})
        .finally(() => {
          this.#pruning = undefined;
        }),
    );
  }

  async #ownFiles(root: string, signal: AbortSignal): Promise<OwnEntry[]> {
    const listed = await listTree(root, skipOwn, signal);
    return placeOwnFiles(root, listed, { store: this.#store, cache: this.#cache, signal });
  }

  async #remove(live: Live): Promise<void> {
    await rm(live.snapshot.folder, { recursive: true, force: true, maxRetries: 2 });
    this.#trees.release(live.tree);
    const { root } = live.snapshot;
    // A package no longer held at all: its files' hashes need not be remembered.
    if (![...this.#live.values()].some((other) => other.snapshot.root === root))
      this.#cache.forget(`${root}${sep}`);
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#work.add(work);
    void work.then(
      () => this.#work.delete(work),
      () => this.#work.delete(work),
    );
    return work;
  }
}

/** The file an own entry was copied from (none for the package.json a lone module's copy gets). */
function sourceOf(plan: { root: string; kind: 'package' | 'module' }, rel: string): string | undefined {
  if (plan.kind === 'package') return join(plan.root, rel);
  return rel === basename(plan.root) ? plan.root : undefined;
}
