/**
 * The process tier's memory limit, enforced by the kernel: one memory cgroup per package process,
 * made under the host's own cgroup, with `processMemoryMb` as its limit. The cgroup covers all the
 * process's memory (heap, `ArrayBuffer`s, native allocations, the programs it starts), and the
 * kernel's OOM killer ends the process when it goes over. Used only where the host may do this
 * itself: cgroup v1's memory hierarchy writable at the host's cgroup, or a cgroup2 whose host cgroup
 * already delegates the memory controller to its children (`cgroup.subtree_control`). toolhost never
 * enables a controller or moves the host. Elsewhere the tier falls back to an RSS watchdog.
 *
 * The folders are `toolhost-<host pid>-<copy>-<n>`: removed when their process has ended, and swept (their
 * leftover processes killed) by the next host when the host that made them is gone.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmdirSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from '../../host/pid-alive.js';
import { hostCgroupFolder } from './cgroup-mounts.js';

export type CgroupSupport =
  | { available: true; version: 1 | 2; parent: string }
  | { available: false; reason: string };

const FOLDER_NAME = /^toolhost-(\d+)-/;

let support: Promise<CgroupSupport> | undefined;

/** Whether (and where) this host can make memory cgroups; found once per process, on first use. */
export function cgroupSupport(): Promise<CgroupSupport> {
  support ??= detect();
  return support;
}

async function detect(): Promise<CgroupSupport> {
  if (process.platform !== 'linux')
    return { available: false, reason: `there are no cgroups on ${process.platform}` };
  let found: ReturnType<typeof hostCgroupFolder>;
  try {
    found = hostCgroupFolder();
  } catch {
    found = undefined;
  }
  if (found === undefined) return { available: false, reason: "the host's memory cgroup was not found" };
  const { version, folder } = found;
  if (version === 2) {
    const delegated = await readFile(join(folder, 'cgroup.subtree_control'), 'utf8').catch(() => '');
    if (!delegated.split(/\s+/).includes('memory')) {
      return { available: false, reason: "the host's cgroup does not delegate the memory controller" };
    }
  }
  // A trial cgroup: the folder may be read-only, or the host's user not allowed to make one.
  const trial = join(folder, `toolhost-${process.pid}-probe-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(trial);
    await writeFile(join(trial, version === 1 ? 'memory.limit_in_bytes' : 'memory.max'), String(64 << 20));
  } catch (error) {
    await rmdir(trial).catch(() => {});
    return {
      available: false,
      reason: `no memory cgroup can be made under ${folder}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    };
  }
  await rmdir(trial).catch(() => {});
  void sweep(folder, version);
  return { available: true, version, parent: folder };
}

/**
 * Removes the cgroups (`toolhost-<pid>-…`) under `parent` of hosts that are gone, killing what still
 * runs in them. Never throws.
 */
export async function sweep(parent: string, version: 1 | 2): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(FOLDER_NAME.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    const cgroup = new ChildCgroup(join(parent, name), version, 0);
    await cgroup.killAll();
    await cgroup.remove();
  }
}

let counter = 0;
/**
 * This copy of the module's own mark in its folders' names: two copies of toolhost loaded in one
 * process (two versions, in two packages' dependencies) each count from 1, and would otherwise make
 * the same folder.
 */
const COPY = randomBytes(3).toString('hex');

/** Every cgroup this process made and has not removed: removed at exit, even without close(). */
const made = new Set<ChildCgroup>();
let exitHookInstalled = false;

/**
 * At exit the processes of every cgroup still there are killed, and the folders removed as soon as
 * the kernel has let the killed processes go (a few milliseconds): a cgroup left behind keeps its
 * parent from being removed by whoever made that (a service manager, a CI runner).
 */
function removeAllAtExit(): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const cgroup of made) {
    cgroup.killAllNow();
    for (let attempt = 0; attempt < 100; attempt += 1) {
      try {
        rmdirSync(cgroup.path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EBUSY') break;
        Atomics.wait(pause, 0, 0, 2);
      }
    }
  }
}

/** One package process's cgroup. */
export class ChildCgroup {
  readonly path: string;
  readonly version: 1 | 2;
  readonly limitBytes: number;

  constructor(path: string, version: 1 | 2, limitBytes: number) {
    this.path = path;
    this.version = version;
    this.limitBytes = limitBytes;
  }

  /**
   * Makes a cgroup's folder, `toolhost-<host pid>-<copy>-<kind><n>` under `parent` (what the next host's
   * sweep finds), and sees it removed at exit, its processes killed, unless {@link remove}d before.
   * `limitBytes` is what the caller will limit it to (0: no memory limit).
   */
  static async make(parent: string, version: 1 | 2, limitBytes: number, kind = ''): Promise<ChildCgroup> {
    const cgroup = new ChildCgroup(
      join(parent, `toolhost-${process.pid}-${COPY}-${kind}${++counter}`),
      version,
      limitBytes,
    );
    await mkdir(cgroup.path);
    made.add(cgroup);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', removeAllAtExit);
    }
    return cgroup;
  }

  /** Makes a cgroup with the limit under `parent`; swap is limited too, where there is any. */
  static async create(parent: string, version: 1 | 2, limitMb: number): Promise<ChildCgroup> {
    const cgroup = await ChildCgroup.make(parent, version, limitMb * 1024 * 1024);
    const { path } = cgroup;
    try {
      const limit = String(cgroup.limitBytes);
      if (version === 1) {
        await writeFile(join(path, 'memory.limit_in_bytes'), limit);
        // memory+swap no higher than memory: nothing goes to swap (absent without swap accounting).
        await writeFile(join(path, 'memory.memsw.limit_in_bytes'), limit).catch(() => {});
      } else {
        await writeFile(join(path, 'memory.max'), limit);
        await writeFile(join(path, 'memory.swap.max'), '0').catch(() => {});
        // The whole cgroup goes at once, not only its largest process.
        await writeFile(join(path, 'memory.oom.group'), '1').catch(() => {});
      }
    } catch (error) {
      made.delete(cgroup);
      await rmdir(path).catch(() => {});
      throw error;
    }
    return cgroup;
  }

  /** Moves processes (whole thread groups) into the cgroup. */
  async place(pids: readonly number[]): Promise<void> {
    for (const pid of pids) await writeFile(join(this.path, 'cgroup.procs'), String(pid));
  }

  /** Whether the kernel's OOM killer has killed a process of this cgroup. */
  oomKilled(): boolean {
    try {
      const file = this.version === 1 ? 'memory.oom_control' : 'memory.events';
      const match = /^oom_kill (\d+)$/m.exec(readFileSync(join(this.path, file), 'utf8'));
      return match !== null && Number(match[1]) > 0;
    } catch {
      return false;
    }
  }

  /** The processes still in it. */
  async pids(): Promise<number[]> {
    const listed = await readFile(join(this.path, 'cgroup.procs'), 'utf8').catch(() => '');
    return listed
      .split('\n')
      .filter((line) => /^\d+$/.test(line))
      .map(Number);
  }

  /** Kills everything still in it: what a tool started and detached from its process group, say. */
  async killAll(): Promise<void> {
    kill(await this.pids());
  }

  /** {@link killAll}, synchronously (at exit). */
  killAllNow(): void {
    let listed = '';
    try {
      listed = readFileSync(join(this.path, 'cgroup.procs'), 'utf8');
    } catch {
      return;
    }
    kill(
      listed
        .split('\n')
        .filter((line) => /^\d+$/.test(line))
        .map(Number),
    );
  }

  /**
   * Removes the folder once its processes are gone (killed ones take a moment to leave). Tries a
   * few times; a cgroup that stays busy is left for the next host's sweep. Never throws.
   */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      try {
        await rmdir(this.path);
        made.delete(this);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          made.delete(this);
          return;
        }
        await this.killAll();
        await new Promise((resolve) => setTimeout(resolve, 25 * (attempt + 1)).unref());
      }
    }
  }
}

function kill(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
