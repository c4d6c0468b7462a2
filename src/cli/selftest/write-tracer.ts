/**
 * Finds what a selftest run wrote outside its tmpDirs: a snapshot of the watched places before the
 * run and after it. Which selftest wrote what is not read off the changed files (their times are
 * the tool's to set): when anything changed, each selftest runs again on its own, in a host of its
 * own, between two snapshots (see `reruns.ts`), and a change is pinned on the ones that make it again.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ModuleStatus } from '../../registry/generation.js';
import { snapshotFoldersOf } from '../../snapshot/layout.js';
import type { SelftestScratch } from './scratch.js';
import {
  type DetectedWrite,
  distinctRoots,
  findWrites,
  type Snapshot,
  takeSnapshot,
  type WatchRoot,
} from './write-watch.js';

/** A host's snapshot of a package (where its modules run from), shown as the package itself. */
export interface PackageCopy {
  folder: string;
  packageRoot: string;
}

/** The watched places of one host's life: the fixed roots and that host's snapshots of the packages. */
export interface Watch {
  roots: Snapshot;
  copies: WatchRoot[];
  copiesBefore: Snapshot;
  /** The copies' last look, taken before the host closes and removes them. */
  copiesAfter: Snapshot | undefined;
}

export class WriteTracer {
  readonly #roots: WatchRoot[];
  readonly #before: Snapshot;
  #run: Watch | undefined;

  private constructor(roots: WatchRoot[], before: Snapshot) {
    this.#roots = roots;
    this.#before = before;
  }

  /**
   * Watches the places a careless selftest writes to: its package folder (for a module file, the
   * folder's own entries), the scratch working directory and dataDir, and the entries of the
   * directory toolhost was started in.
   */
  static async start(options: {
    paths: readonly string[];
    scratch: SelftestScratch;
    launchDirectory: string;
  }): Promise<WriteTracer> {
    const roots: WatchRoot[] = [
      { path: options.scratch.workingDirectory, place: 'working-directory' },
      // `outputs/` is where the host itself keeps a cut output.
      { path: options.scratch.dataDir, place: 'data-dir', ignore: ['outputs'] },
      { path: options.launchDirectory, place: 'launch-directory', depth: 0 },
    ];
    for (const path of options.paths) {
      const real = await realpath(path).catch(() => undefined);
      const info = real === undefined ? undefined : await stat(real).catch(() => undefined);
      // A missing path is reported by the host when it is loaded.
      if (real === undefined || info === undefined) continue;
      roots.push(
        info.isDirectory()
          ? { path: real, place: 'package' }
          : { path: dirname(real), place: 'package', depth: 0 },
      );
    }
    const distinct = distinctRoots(roots);
    return new WriteTracer(distinct, await takeSnapshot(distinct));
  }

  /**
   * Also watches the run's host's snapshots of the packages (made when they were loaded): a selftest
   * writing beside its own module writes there, and is reported as writing in its package.
   */
  async watchCopies(copies: readonly PackageCopy[]): Promise<void> {
    this.#run = await this.#watch(copies, this.#before);
  }

  /** The last look at the run's host's snapshots, before the host closes and removes them. */
  async settleCopies(): Promise<void> {
    if (this.#run !== undefined) this.#run.copiesAfter = await takeSnapshot(this.#run.copies);
  }

  /** Everything the run changed (once its host has closed). */
  async changes(): Promise<DetectedWrite[]> {
    return this.#run === undefined ? [] : this.#changesIn(this.#run);
  }

  /** A watch over one rerun's host, from now: `copies` are that host's snapshots. */
  async watchRerun(copies: readonly PackageCopy[]): Promise<Watch> {
    return this.#watch(copies, await takeSnapshot(this.#roots));
  }

  /** The last look at a rerun's host's snapshots, before it closes. */
  async settleRerun(watch: Watch): Promise<void> {
    watch.copiesAfter = await takeSnapshot(watch.copies);
  }

  /** What a rerun changed (once its host has closed). */
  rerunChanges(watch: Watch): Promise<DetectedWrite[]> {
    return this.#changesIn(watch);
  }

  async #watch(copies: readonly PackageCopy[], roots: Snapshot): Promise<Watch> {
    const watched: WatchRoot[] = copies.map(({ folder, packageRoot }) => ({
      path: folder,
      place: 'package',
      shownAs: packageRoot,
    }));
    return { roots, copies: watched, copiesBefore: await takeSnapshot(watched), copiesAfter: undefined };
  }

  async #changesIn(watch: Watch): Promise<DetectedWrite[]> {
    const copiesNow = watch.copiesAfter ?? (await takeSnapshot(watch.copies));
    return [
      ...findWrites(watch.roots, await takeSnapshot(this.#roots)),
      ...findWrites(watch.copiesBefore, copiesNow),
    ].sort((a, b) => a.path.localeCompare(b.path));
  }
}

/** Where a host's snapshots of its loaded packages are: each package's current version, once. */
export async function packageCopies(
  statuses: readonly ModuleStatus[],
  tmpDir: string,
): Promise<PackageCopy[]> {
  const versions = new Map<string, string>();
  for (const status of statuses)
    if (status.version !== undefined) versions.set(status.source, status.version);
  const found = await Promise.all(
    [...versions].map(async ([source, version]) => {
      // A module loaded on its own is copied alone: its copy stands for its folder's own entries.
      const packageRoot = statuses.some((status) => status.path === source) ? dirname(source) : source;
      const folders = await snapshotFoldersOf(tmpDir, source, version);
      return folders.map((folder) => ({ folder, packageRoot }));
    }),
  );
  return found.flat();
}
