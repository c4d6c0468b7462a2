/**
 * The pids cgroup (src/process/sandbox/pids-cgroup.ts) on cgroup v1, and where the host's cgroups
 * are mounted (cgroup-mounts.ts): a mount point with a space in it is found as mountinfo escapes
 * it, and a v1 pids folder a process leaves behind is removed at its exit, what still ran in it
 * killed, as a memory cgroup is. The exit test runs only where a v1 pids cgroup can be made.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cgroupV1Folder, hostCgroupV1Folder } from '../dist/src/process/sandbox/cgroup-mounts.js';
import { REPO } from './support/cli-run.js';

/** Whether this process may make a folder in its v1 pids cgroup. */
function canMakeV1PidsCgroup(): boolean {
  const parent = hostCgroupV1Folder('pids');
  if (parent === undefined) return false;
  const probe = join(parent, `toolhost-test-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** What an ES module script run by a Node process of its own prints as JSON, once it exits with 0. */
async function printedBy(script: string): Promise<unknown> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(code).toBe(0);
  return JSON.parse(out);
}

/** Whether a process runs (not gone, not a zombie). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('cgroup mounts', () => {
  it("finds a v1 hierarchy's folder under a mount point mountinfo escapes, and a container's partial mount", () => {
    const cgroup = '12:pids:/ci/job 7\n4:memory:/ci/job 7\n0::/\n';
    const mountinfo = [
      '31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw',
      '39 31 0:36 / /sys/fs/my\\040cgroups/pids rw,relatime - cgroup cgroup rw,pids',
      '35 31 0:32 /ci /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
    ].join('\n');
    expect(cgroupV1Folder('pids', cgroup, mountinfo)).toBe('/sys/fs/my cgroups/pids/ci/job 7');
    expect(cgroupV1Folder('memory', cgroup, mountinfo)).toBe('/sys/fs/cgroup/memory/job 7');
    expect(cgroupV1Folder('blkio', cgroup, mountinfo)).toBeNull();
    expect(cgroupV1Folder('pids', cgroup, '')).toBeUndefined();
  });
});

describe.runIf(canMakeV1PidsCgroup())('a v1 pids cgroup', () => {
  it('is removed when the process that made it exits without removing it, what ran in it killed', async () => {
    // A process makes one, puts a long sleep in it, and exits without remove().
    const script = `
      import { spawn } from 'node:child_process';
      import { PidsCgroup } from ${JSON.stringify(join(REPO, 'dist/src/process/sandbox/pids-cgroup.js'))};
      const pids = await PidsCgroup.create(undefined, 64);
      const sleeper = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
      sleeper.unref();
      await pids.place([sleeper.pid]);
      console.log(JSON.stringify({ path: pids.path, sleeper: sleeper.pid }));
    `;
    const { path, sleeper } = (await printedBy(script)) as { path: string; sleeper: number };
    expect(path).toMatch(/\/toolhost-\d+-[0-9a-f]{6}-pids-\d+$/);
    expect(existsSync(path)).toBe(false);
    expect(running(sleeper)).toBe(false);
  });

  it('is made by two copies of toolhost in one process without the two naming the same folder', async () => {
    // Two instances of the module (two installed copies of toolhost), each counting from 1.
    const module = join(REPO, 'dist/src/process/sandbox/memory-cgroup.js');
    const script = `
      import { hostCgroupV1Folder } from ${JSON.stringify(join(REPO, 'dist/src/process/sandbox/cgroup-mounts.js'))};
      const parent = hostCgroupV1Folder('pids');
      const first = await import(${JSON.stringify(`file://${module}?copy=first`)});
      const second = await import(${JSON.stringify(`file://${module}?copy=second`)});
      const made = [
        await first.ChildCgroup.make(parent, 1, 0, 'pids-'),
        await second.ChildCgroup.make(parent, 1, 0, 'pids-'),
      ];
      const paths = made.map((cgroup) => cgroup.path);
      for (const cgroup of made) await cgroup.remove();
      console.log(JSON.stringify(paths));
    `;
    const paths = (await printedBy(script)) as string[];
    expect(paths).toHaveLength(2);
    expect(new Set(paths).size).toBe(2);
    for (const path of paths) expect(existsSync(path)).toBe(false);
  });
});
