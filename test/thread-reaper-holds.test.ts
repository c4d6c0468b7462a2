/**
 * Ending a worker holds the process open until the worker has exited or the bound has passed
 * (src/calls/thread-reaper.ts), and no longer. Each case runs in a Node process of its own whose
 * only work is a top-level `await` of `ensureEnded`: had nothing held the event loop, Node would end
 * that process with the await unsettled (exit code 13), as a script's `await host.close()` did while
 * a terminated worker took a moment to exit.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './support/cli-run.js';

const REAPER = JSON.stringify(join(REPO, 'dist/src/calls/thread-reaper.js'));

/**
 * Runs an ES module script in a Node process of its own; its exit code and what it printed. A
 * process still running after 30 s is killed (its code is then null), so a bound left holding it
 * fails the test without outliving it.
 */
function runScript(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { timeout: 30_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('ending a worker', () => {
  it('holds the process open until its bounds have passed when the worker never exits, then lets the worker go', async () => {
    const run = await runScript(`
      import { ensureEnded } from ${REAPER};
      let unrefs = 0;
      const worker = { unref: () => { unrefs += 1; } };
      await ensureEnded({ worker, threadId: 1, osThreadId: null, exited: new Promise(() => {}), hasExited: () => false }, 50);
      console.log('settled, let go ' + unrefs + ' time(s)');
    `);
    expect(run).toEqual({ code: 0, stdout: 'settled, let go 1 time(s)\n', stderr: '' });
  });

  it('lets the process end as soon as the worker has exited, however long its bound', async () => {
    // The exit comes on a timer that holds nothing open; a bound of ten minutes left running would
    // keep this process waiting for it, past the 30 s after which it is killed.
    const run = await runScript(`
      import { ensureEnded } from ${REAPER};
      let done = false;
      const exited = new Promise((resolve) => setTimeout(() => { done = true; resolve(); }, 20).unref());
      const worker = { unref: () => { throw new Error('let go, but it had exited'); } };
      await ensureEnded({ worker, threadId: 1, osThreadId: null, exited, hasExited: () => done }, 600_000);
      console.log('settled');
    `);
    expect(run).toEqual({ code: 0, stdout: 'settled\n', stderr: '' });
  });
});
