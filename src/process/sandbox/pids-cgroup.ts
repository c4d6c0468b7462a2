/**
 * A limit on how many processes and threads a process tree may run at once (`pids.max`): a fork
 * bomb then fails its forks instead of filling the machine. On cgroup2 it is set in the tree's
 * memory cgroup (where the host's cgroup delegates the pids controller); on cgroup v1 it is a
 * cgroup of its own in the pids hierarchy, made under the host's as a memory cgroup is (found,
 * made, removed at exit and swept by memory-cgroup.ts's helpers). Where neither can be made there
 * is no such limit (the memory limit still bounds a fork bomb by what its processes use).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostCgroupV1Folder } from './cgroup-mounts.js';
import { ChildCgroup, sweep } from './memory-cgroup.js';

let swept = false;

export class PidsCgroup {
  /** The cgroup of its own (cgroup v1), or undefined when the limit is set in the memory cgroup. */
  readonly #own: ChildCgroup | undefined;

  private constructor(own: ChildCgroup | undefined) {
    this.#own = own;
  }

  /** Sets the limit for the tree placed in `memory` (or placed here later); rejects where it can't. */
  static async create(memory: ChildCgroup | undefined, maxPids: number): Promise<PidsCgroup> {
    if (memory?.version === 2) {
      await writeFile(join(memory.path, 'pids.max'), String(maxPids));
      return new PidsCgroup(undefined);
    }
    const parent = hostCgroupV1Folder('pids');
    if (parent === undefined) throw new Error('there is no cgroup v1 pids hierarchy');
    if (!swept) {
      swept = true;
      await sweep(parent, 1);
    }
    // Removed at exit like a memory cgroup, even when remove() is never reached.
    const own = await ChildCgroup.make(parent, 1, 0, 'pids-');
    try {
      await writeFile(join(own.path, 'pids.max'), String(maxPids));
    } catch (error) {
      await own.remove();
      throw error;
    }
    return new PidsCgroup(own);
  }

  /** The folder of its own (cgroup v1); undefined when the limit is the memory cgroup's. */
  get path(): string | undefined {
    return this.#own?.path;
  }

  /** Moves processes into it (nothing to do when the limit is the memory cgroup's). */
  async place(pids: readonly number[]): Promise<void> {
    await this.#own?.place(pids);
  }

  /** Removes its folder once its processes are gone (killing what is left); never throws. */
  async remove(): Promise<void> {
    await this.#own?.remove();
  }
}
