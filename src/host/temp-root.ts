/**
 * The host's own temp folder, `toolhost-<pid>-<hex>` under the `tempRoot` option: calls' tmpDirs and
 * the package snapshots live in it. `close()` removes it. A host that is never closed (a short
 * script, a crash) has it removed synchronously when the process exits, and folders left by a process
 * that could not run its exit handlers (SIGKILL, Ctrl-C, a power cut) are swept by the next host made
 * in the same `tempRoot`. A folder whose pid is alive is never touched: other hosts may be using it.
 */
import { rmSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tempRootPid } from '../snapshot/layout.js';
import { isAlive } from './pid-alive.js';

const held = new Set<string>();
let exitHookInstalled = false;

function removeHeld(): void {
  for (const path of held) {
    try {
      rmSync(path, { recursive: true, force: true, maxRetries: 2 });
    } catch {
      // Exiting: nothing is left to report to, and the next host's sweep retries.
    }
  }
}

/** Removes `path` when the process exits, unless {@link releaseTempRoot} came first. */
export function holdTempRoot(path: string): void {
  held.add(path);
  if (!exitHookInstalled) {
    // One listener for every host of the process: a listener per host would trip Node's
    // too-many-listeners warning in an app that makes hosts in a loop.
    process.on('exit', removeHeld);
    exitHookInstalled = true;
  }
}

/** The host removed `path` itself (at `close()`). */
export function releaseTempRoot(path: string): void {
  held.delete(path);
}

const sweeps = new Map<string, Promise<void>>();

/**
 * Removes the `toolhost-<pid>-<hex>` folders in `parent` whose process is gone. Once per folder per
 * process: hosts made later in the same process find nothing new to sweep.
 */
export function sweepDeadTempRoots(parent: string): Promise<void> {
  let sweep = sweeps.get(parent);
  if (sweep === undefined) {
    sweep = sweepOnce(parent);
    sweeps.set(parent, sweep);
  }
  return sweep;
}

async function sweepOnce(parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const pid = tempRootPid(name);
      if (pid === undefined || pid === process.pid || isAlive(pid)) return;
      await rm(join(parent, name), { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
    }),
  );
}
