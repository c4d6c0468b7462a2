/**
 * Finds what a selftest run wrote outside its tmpDirs and which selftest wrote it: a snapshot of the
 * watched places before the run and after it, each change pinned on the selftest running when it
 * happened; a change made while several ran is pinned by running those again, one at a time, each
 * between two snapshots.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { attributeWrites, type Rerun, type RunWindow, type WriteFinding } from './selftest-results.js';
import type { SelftestScratch } from './selftest-scratch.js';
import { distinctRoots, findWrites, type Snapshot, takeSnapshot, type WatchRoot } from './write-watch.js';

export class WriteTracer {
  readonly #roots: WatchRoot[];
  readonly #before: Snapshot;
  readonly #reruns: Rerun[] = [];

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

  /** The selftests that ran when something changed that no single one can be blamed for by time. */
  async suspects(windows: readonly RunWindow[]): Promise<string[]> {
    const findings = attributeWrites(findWrites(this.#before, await takeSnapshot(this.#roots)), windows);
    return [...new Set(findings.flatMap((finding) => (finding.tool === null ? finding.suspects : [])))];
  }

  /** Runs `tool`'s selftest again (through `run`) between two snapshots. */
  async rerun(tool: string, run: () => Promise<unknown>): Promise<void> {
    const ahead = await takeSnapshot(this.#roots);
    await run();
    this.#reruns.push({ tool, changed: findWrites(ahead, await takeSnapshot(this.#roots)) });
  }

  /** Everything changed since the start, each pinned on a selftest where it can be. */
  async findings(windows: readonly RunWindow[]): Promise<WriteFinding[]> {
    return attributeWrites(findWrites(this.#before, await takeSnapshot(this.#roots)), windows, this.#reruns);
  }
}
