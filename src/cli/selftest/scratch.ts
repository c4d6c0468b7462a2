/**
 * The throwaway folder a selftest run lives in, removed when the run ends:
 *
 *   toolhost-selftest-XXXXXX/
 *     cwd/    the working directory while declarations are read and selftests run, so a relative
 *             write lands here (and is reported) instead of in the user's folder
 *     data/   the host's dataDir for the run: selftests never see the user's real data
 *     tmp/    where the host makes every selftest's tmpDir; it must be empty once the host closes
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ToolHostOptions } from '../../host/options.js';
import { ToolHost } from '../../host/tool-host.js';
import type { OutputStream } from '../ui/terminal.js';

export interface SelftestScratch {
  root: string;
  workingDirectory: string;
  dataDir: string;
  tmpRoot: string;
}

export async function makeScratch(): Promise<SelftestScratch> {
  const root = await mkdtemp(join(tmpdir(), 'toolhost-selftest-'));
  const scratch = {
    root,
    workingDirectory: join(root, 'cwd'),
    dataDir: join(root, 'data'),
    tmpRoot: join(root, 'tmp'),
  };
  await Promise.all([mkdir(scratch.workingDirectory), mkdir(scratch.dataDir), mkdir(scratch.tmpRoot)]);
  return scratch;
}

/** A host whose calls' tmpDirs are made under `tmpRoot`, so a run can check none is left. */
export function hostWithTmpRoot(options: ToolHostOptions, tmpRoot: string): ToolHost {
  return new ToolHost({ ...options, tempRoot: tmpRoot });
}

/**
 * What is left under the tmp root once the host closed: each call's tmpDir (`call-N`) and any
 * other file, or else the host's own folders if those are what remain.
 */
export async function leftoverTmpDirs(scratch: SelftestScratch): Promise<string[]> {
  const left: string[] = [];
  const walk = async (folder: string) => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory() && !entry.name.startsWith('call-')) await walk(path);
      else left.push(path);
    }
  };
  await walk(scratch.tmpRoot);
  if (left.length > 0) return left;
  const top = await readdir(scratch.tmpRoot).catch(() => []);
  return top.map((name) => join(scratch.tmpRoot, name));
}

export async function removeScratch(scratch: SelftestScratch): Promise<void> {
  await rm(scratch.root, { recursive: true, force: true, maxRetries: 3 });
}

/** A path as the user typed it, and made absolute (the run changes the working directory). */
export interface RunPath {
  shown: string;
  path: string;
}

/**
 * One selftest run's scratch folder and the hosts it makes there: the run's own (closed once, also
 * when the run is interrupted) and the reruns' (each closed by its rerun). `dispose()` closes the
 * run's host, goes back to the directory the run started in and removes the folder.
 */
export class ScratchRun {
  readonly scratch: SelftestScratch;
  readonly paths: RunPath[];
  readonly launchDirectory = process.cwd();
  readonly #options: ScratchRunOptions['hostOptions'];
  readonly #signal: AbortSignal;
  readonly #onAbort = () => void this.closeHost();
  #host: ToolHost | undefined;
  #closing: Promise<void> | undefined;

  private constructor(scratch: SelftestScratch, options: ScratchRunOptions) {
    this.scratch = scratch;
    this.paths = options.paths.map((shown) => ({ shown, path: resolve(shown) }));
    this.#options = options.hostOptions;
    this.#signal = options.signal;
    this.#signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  static async open(options: ScratchRunOptions): Promise<ScratchRun> {
    return new ScratchRun(await makeScratch(), options);
  }

  /** Relative writes (by a module as it loads, or by a selftest) land in the scratch folder from now. */
  enter(): void {
    process.chdir(this.scratch.workingDirectory);
  }

  leave(): void {
    if (process.cwd() !== this.launchDirectory) process.chdir(this.launchDirectory);
  }

  /** The run's own host, made once, its notices written to `stderr`. */
  runHost(stderr: OutputStream): ToolHost {
    this.#host ??= this.newHost(stderr);
    return this.#host;
  }

  /** A host of its own (a rerun's), made as the run's is; its caller closes it. */
  newHost(stderr: OutputStream): ToolHost {
    return hostWithTmpRoot(this.#options(stderr, this.scratch), this.scratch.tmpRoot);
  }

  /** Closes the run's host (once, however often it is asked). */
  async closeHost(): Promise<void> {
    if (this.#host !== undefined) this.#closing ??= this.#host.close();
    await this.#closing;
  }

  async dispose(): Promise<void> {
    this.#signal.removeEventListener('abort', this.#onAbort);
    await this.closeHost();
    this.leave();
    await removeScratch(this.scratch);
  }
}

export interface ScratchRunOptions {
  /** The packages or modules, as typed. */
  paths: readonly string[];
  /** Interrupts the run: its host closes at once. */
  signal: AbortSignal;
  /** The options of every host the run makes (its tmp root is the scratch folder's). */
  hostOptions(stderr: OutputStream, scratch: SelftestScratch): ToolHostOptions;
}
