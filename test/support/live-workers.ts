/**
 * What runs calls, counted from outside the worker budget: the worker threads piscina really made
 * and that have not exited, and the host's child processes that are alive. Importing this module
 * starts counting threads: import it before the first host is made.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';

/**
 * Every worker thread made through `node:worker_threads` as piscina reaches it (its CommonJS build
 * reads `Worker` off the module when it makes one), alive until its `exit` event.
 */
export const liveThreads = { now: 0 };
const threadsModule = createRequire(import.meta.url)('node:worker_threads') as { Worker: typeof Worker };
const OriginalWorker = threadsModule.Worker;
threadsModule.Worker = class CountedWorker extends OriginalWorker {
  constructor(...args: ConstructorParameters<typeof Worker>) {
    super(...args);
    liveThreads.now += 1;
    this.once('exit', () => {
      liveThreads.now -= 1;
    });
  }
};

/** This process's children that are alive (not zombies), from /proc. */
export function liveChildren(): number {
  let count = 0;
  for (const task of readdirSync('/proc/self/task')) {
    let children: string[];
    try {
      children = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(' ');
    } catch {
      continue;
    }
    for (const pid of children) {
      if (pid === '') continue;
      try {
        // The state follows the command's closing parenthesis.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') count += 1;
      } catch {
        // Gone in between.
      }
    }
  }
  return count;
}
