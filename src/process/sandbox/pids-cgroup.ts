/**
 * A limit on how many processes and threads a process tree may run at once (`pids.max`): a fork
 * bomb then fails its forks instead of filling the machine. On cgroup2 it is set in the tree's
 * memory cgroup (where the host's cgroup delegates the pids controller); on cgroup v1 it is a
 * cgroup of its own in the pids hierarchy, made under the host's. Where neither can be made there
 * is no such limit (the memory limit still bounds a fork bomb by what its processes use).
 */
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from '../../host/pid-alive.js';
import type { ChildCgroup } from './memory-cgroup.js';

const FOLDER_NAME = /^toolhost-(\d+)-pids-/;
let counter = 0;
let swept = false;

export class PidsCgroup {
  /** The folder of its own (cgroup v1), or undefined when the limit is set in the memory cgroup. */
  readonly #path: string | undefined;

  private constructor(path: string | undefined) {
    this.#path = path;
  }

  /** Sets the limit for the tree placed in `memory` (or placed here later); rejects where it can't. */
  static async create(memory: ChildCgroup | undefined, maxPids: number): Promise<PidsCgroup> {
    if (memory?.version === 2) {
      await writeFile(join(memory.path, 'pids.max'), String(maxPids));
      return new PidsCgroup(undefined);
    }
    const parent = hostPidsFolder();
    if (parent === undefined) throw new Error('there is no cgroup v1 pids hierarchy');
    if (!swept) {
      swept = true;
      await sweep(parent);
    }
    const path = join(parent, `toolhost-${process.pid}-pids-${++counter}`);
    await mkdir(path);
    try {
      await writeFile(join(path, 'pids.max'), String(maxPids));
    } catch (error) {
      await rmdir(path).catch(() => {});
      throw error;
    }
    return new PidsCgroup(path);
  }

  /** Moves processes into it (nothing to do when the limit is the memory cgroup's). */
  async place(pids: readonly number[]): Promise<void> {
    if (this.#path === undefined) return;
    for (const pid of pids) await writeFile(join(this.#path, 'cgroup.procs'), String(pid));
  }

  /** Removes its folder once its processes are gone; never throws. */
  async remove(): Promise<void> {
    const path = this.#path;
    if (path === undefined) return;
    for (let attempt = 0; attempt < 20; attempt += 1) {
      try {
        await rmdir(path);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        killAll(path);
        await new Promise((resolve) => setTimeout(resolve, 25 * (attempt + 1)).unref());
      }
    }
  }
}

/** SIGKILLs every process still in the cgroup at `path`. */
function killAll(path: string): void {
  let listed = '';
  try {
    listed = readFileSync(join(path, 'cgroup.procs'), 'utf8');
  } catch {
    return;
  }
  for (const line of listed.split('\n')) {
    if (!/^\d+$/.test(line)) continue;
    try {
      process.kill(Number(line), 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/** The host's own cgroup in the v1 pids hierarchy, from /proc. */
function hostPidsFolder(): string | undefined {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((entry) => (entry.split(':')[1] ?? '').split(',').includes('pids'));
    if (line === undefined) return undefined;
    const path = line.split(':')[2] ?? '/';
    for (const mount of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [before, after] = mount.split(' - ');
      const fields = before?.split(' ') ?? [];
      const [fsType, , superOptions = ''] = after?.split(' ') ?? [];
      if (fsType !== 'cgroup' || !superOptions.split(',').includes('pids')) continue;
      const root = fields[3] ?? '/';
      const mountPoint = fields[4] ?? '';
      if (path !== root && !path.startsWith(root === '/' ? '/' : `${root}/`)) continue;
      return join(mountPoint, path.slice(root === '/' ? 0 : root.length));
    }
  } catch {
    // No /proc: no cgroups.
  }
  return undefined;
}

/** Removes the empty pids cgroups that hosts no longer running left behind. */
async function sweep(parent: string): Promise<void> {
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const pid = Number(FOLDER_NAME.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    await rmdir(join(parent, name)).catch(() => {});
  }
}
