/**
 * Finds what a selftest run wrote outside its tmpDirs and which selftest wrote it: a snapshot of the
 * watched places before the run and after it, each change pinned on the selftest running when it
 * happened; a change made while several ran is pinned by running those again, one at a time, each
 * between two snapshots.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { attributeWrites, type Rerun, type RunWindow, type WriteFinding } from './results.js';
import type { SelftestScratch } from './scratch.js';
import {
  type DetectedWrite,
  distinctRoots,
  findWrites,
  type Snapshot,
  takeSnapshot,
  type WatchRoot,
} from './write-watch.js';

export class WriteTracer {
  readonly #roots: WatchRoot[];
  readonly #before: Snapshot;
  readonly #reruns: Rerun[] = [];
  /** The host's snapshots of the packages, compared like the packages (see {@link watchSnapshots}). */
  #copies: WatchRoot[] = [];
  #copiesBefore: Snapshot = { roots: [] };
  #copiesAfter: Snapshot | undefined;

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
   * Also watches the host's snapshots of the packages (made when they were loaded): a selftest
   * writing beside its own module writes there, and is reported as writing in its package.
   */
  async watchSnapshots(snapshots: ReadonlyArray<{ folder: string; packageRoot: string }>): Promise<void> {
    this.#copies = snapshots.map(({ folder, packageRoot }) => ({
      path: folder,
      place: 'package',
      shownAs: packageRoot,
    }));
    this.#copiesBefore = await takeSnapshot(this.#copies);
  }

  /** The last look at the snapshots, before the host closes and removes them. */
  async settleSnapshots(): Promise<void> {
    this.#copiesAfter = await takeSnapshot(this.#copies);
  }

  /** The selftests that ran when something changed that no single one can be blamed for by time. */
  async suspects(windows: readonly RunWindow[]): Promise<string[]> {
    const findings = attributeWrites(await this.#changesSince(this.#before, this.#copiesBefore), windows);
    return [...new Set(findings.flatMap((finding) => (finding.tool === null ? finding.suspects : [])))];
  }

  /** Runs `tool`'s selftest again (through `run`) between two snapshots. */
  async rerun(tool: string, run: () => Promise<unknown>): Promise<void> {
    const [ahead, copiesAhead] = await Promise.all([takeSnapshot(this.#roots), takeSnapshot(this.#copies)]);
    await run();
    this.#reruns.push({ tool, changed: await this.#changesSince(ahead, copiesAhead) });
  }

  /** Everything changed since the start, each pinned on a selftest where it can be. */
  async findings(windows: readonly RunWindow[]): Promise<WriteFinding[]> {
    return attributeWrites(await this.#changesSince(this.#before, this.#copiesBefore), windows, this.#reruns);
  }

  async #changesSince(before: Snapshot, copiesBefore: Snapshot): Promise<DetectedWrite[]> {
    const copiesNow = this.#copiesAfter ?? (await takeSnapshot(this.#copies));
    return [
      ...findWrites(before, await takeSnapshot(this.#roots)),
      ...findWrites(copiesBefore, copiesNow),
    ].sort((a, b) => a.path.localeCompare(b.path));
  }
}
