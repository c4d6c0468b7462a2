/**
 * One package process held to its memory limit (`processMemoryMb`): in a memory cgroup of its own
 * where the host can make one (memory-cgroup.ts: the kernel ends it when it goes over), else, on
 * Linux, watched by an RSS watchdog (rss-watchdog.ts: the host ends it). Elsewhere nothing holds it.
 */
import { descendantsOf } from '../../shared/process-tree.js';
import { type CgroupSupport, ChildCgroup } from './memory-cgroup.js';
import { RssWatchdog } from './rss-watchdog.js';

/** What holds one package process to its memory limit, made before the process starts. */
export class MemoryBound {
  readonly #cgroup: ChildCgroup | undefined;
  readonly #memoryMb: number;
  #watchdog: RssWatchdog | undefined;
  #busy = false;

  private constructor(cgroup: ChildCgroup | undefined, memoryMb: number) {
    this.#cgroup = cgroup;
    this.#memoryMb = memoryMb;
  }

  /** Makes the process's cgroup where `cgroups` says the host can; rejects when making it fails. */
  static async create(cgroups: CgroupSupport, memoryMb: number): Promise<MemoryBound> {
    const cgroup = cgroups.available
      ? await ChildCgroup.create(cgroups.parent, cgroups.version, memoryMb)
      : undefined;
    return new MemoryBound(cgroup, memoryMb);
  }

  /** Puts the process just started in its cgroup at once (what it starts before {@link hold} follows then). */
  async placeStarted(pid: number): Promise<void> {
    await this.#cgroup?.place([pid]).catch(() => {});
  }

  /**
   * Holds the process before any tool code can run in it: it and everything it started in its
   * cgroup, or, without one, its watchdog started (`onOver` says what it did). Rejects when the
   * processes could not be put in the cgroup.
   */
  async hold(pid: number, onOver: (message: string) => void): Promise<void> {
    await this.#cgroup?.place([pid, ...descendantsOf(pid)]);
    if (this.#cgroup !== undefined || process.platform !== 'linux') return;
    const limitMb = this.#memoryMb;
    this.#watchdog = new RssWatchdog(pid, limitMb * 1024 * 1024, () =>
      onOver(`went over its memory limit (${limitMb} MB of resident memory)`),
    );
    this.#watchdog.busy = this.#busy;
  }

  /** A process running calls is watched closely, an idle one less often. */
  set busy(busy: boolean) {
    this.#busy = busy;
    if (this.#watchdog !== undefined) this.#watchdog.busy = busy;
  }

  /** The process is being ended, or has exited: what is left in its cgroup goes, and nothing is watched. */
  endAll(): void {
    this.#watchdog?.stop();
    void this.#cgroup?.killAll();
  }

  /** Whether the kernel ended the process for going over its cgroup's limit. */
  get oomKilled(): boolean {
    return this.#cgroup?.oomKilled() === true;
  }

  /** The process is gone: its cgroup is emptied and removed. */
  release(): void {
    const cgroup = this.#cgroup;
    if (cgroup !== undefined) void cgroup.killAll().then(() => cgroup.remove());
  }
}
