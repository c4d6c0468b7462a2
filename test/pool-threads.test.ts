/**
 * What a pool's threads count for the worker budget: a worker told to end is counted once, as
 * ending until it exits, or as stranded once the reaper has let it go, never also as running while
 * piscina still lists it (it lists a worker the host ended until that worker exits).
 */
import { execFileSync } from 'node:child_process';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { afterEach, describe, expect, it } from 'vitest';
import { PoolThreads } from '../dist/src/calls/pool-threads.js';
import { tempDir } from './support/tool-packages.js';

const BLOCKS_AFTER_TASK = fileURLToPath(
  new URL('../fixtures/workers/blocks-after-task.cjs', import.meta.url),
);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** PoolThreads on a real piscina pool of one thread, with a promise for its next change and exit. */
function threadsOnPiscina() {
  const waiters = { change: [] as Array<() => void>, gone: [] as Array<() => void> };
  const threads = new PoolThreads({
    maxLogChars: 1000,
    onFault: () => {},
    onWorkerGone: () => {
      for (const wake of waiters.gone.splice(0)) wake();
    },
    onChange: () => {
      for (const wake of waiters.change.splice(0)) wake();
    },
  });
  // As the host's pools: no minimum of threads (piscina would replace the one that exits). Atomics
  // off: an idle worker runs its event loop (the fixture blocks from it), not Atomics.wait.
  const pool = new Piscina({
    filename: BLOCKS_AFTER_TASK,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 60_000,
    atomics: 'disabled',
  });
  pool.on('error', () => {});
  threads.attach(pool);
  cleanups.push(() => pool.destroy());
  const counts = () => ({ running: threads.running, ending: threads.ending, stranded: threads.stranded });
  const next = (which: 'change' | 'gone') => new Promise<void>((wake) => waiters[which].push(wake));
  return { threads, pool, counts, next };
}

describe('a pool’s threads, as the worker budget counts them', () => {
  it('a worker ended to give its place back that won’t exit counts once: ending, then stranded, then gone', async () => {
    const dir = await tempDir('toolhost-threads-');
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const handshake = join(dir, 'handshake');
    execFileSync('mkfifo', [handshake]);
    const { threads, pool, counts, next } = threadsOnPiscina();

    // The handshake's reader is open before the task runs; it reads the sleep's pid once the
    // worker's thread is blocked.
    const reader = open(handshake, 'r');
    expect(await pool.run({ handshake })).toBe('ran');
    const handle = await reader;
    const sleepPid = Number((await handle.readFile('utf8')).trim());
    await handle.close();
    cleanups.push(async () => {
      try {
        process.kill(sleepPid, 'SIGKILL');
      } catch {
        // Killed by the test already.
      }
    });
    expect(sleepPid).toBeGreaterThan(0);
    expect(counts()).toEqual({ running: 1, ending: 0, stranded: 0 });

    const letGo = next('change');
    expect(threads.endIdleWorker()).toBe(true);
    expect(counts()).toEqual({ running: 0, ending: 1, stranded: 0 });
    // The reaper's bound passes and it lets the worker go: piscina still lists it (it never ended
    // it), and it is counted as stranded only.
    await letGo;
    expect(counts()).toEqual({ running: 0, ending: 0, stranded: 1 });
    expect(pool.threads).toHaveLength(1);

    const gone = next('gone');
    process.kill(sleepPid, 'SIGKILL');
    await gone;
    expect(counts()).toEqual({ running: 0, ending: 0, stranded: 0 });
  });
});
