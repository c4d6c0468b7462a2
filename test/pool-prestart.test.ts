/**
 * A pool told to start a worker ahead of its first call (a spare package process does, see
 * process/spares.ts) gives that call the worker it started: a call that comes while the worker is
 * still starting waits for it rather than having piscina start a second one beside it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { PoolReply } from '../dist/src/calls/answer-once.js';
import { workerExecArgv } from '../dist/src/calls/isolation.js';
import { TrustDomainPool } from '../dist/src/calls/worker-pool.js';
import { echoTask as sharedEchoTask } from './support/echo-task.js';

let pool: TrustDomainPool | undefined;
let root: string | undefined;
afterEach(async () => {
  await pool?.close();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** A call of the echo fixture that answers `echo of <taskId>`. */
function echoTask(taskId: string) {
  return sharedEchoTask(taskId, `echo of ${taskId}`);
}

/** Whether `reply` is the echo tool's answer to the task `taskId`. */
function echoed(reply: PoolReply | undefined, taskId = 'first'): boolean {
  return reply?.ok === true && !reply.isError && JSON.stringify(reply.content).includes(`echo of ${taskId}`);
}

/** A pool of up to four real call workers with the worker tier's flags (and `extraArgv` after them). */
async function prestartedPool(extraArgv: string[] = []): Promise<TrustDomainPool> {
  root = await mkdtemp(join(tmpdir(), 'toolhost-prestart-'));
  const tmpDir = join(root, 'tmp');
  return new TrustDomainPool(
    {
      maxThreads: 4,
      idleTimeoutMs: 30_000,
      heapMb: 64,
      stackMb: 4,
      timeoutGraceMs: 100,
      env: {},
      execArgv: [...workerExecArgv('worker', { domain: root, tmpDir }, { allowAddons: false }), ...extraArgv],
      allowAddons: false,
      call: { dataDir: root, tmpDir, maxResultBytes: 65_536, maxLogChars: 1024 },
    },
    () => {},
  );
}

it('a call made while the prestarted worker starts runs on it, and no second worker starts', async () => {
  pool = await prestartedPool();
  pool.prestart();
  const reply = await pool.run(echoTask('first'));

  expect(echoed(reply)).toBe(true);
  expect(pool.occupied).toBe(1);
  expect(pool.idle).toBe(1);
});

it('calls made together while it starts all answer', async () => {
  pool = await prestartedPool();
  pool.prestart();
  const replies = await Promise.all(['a', 'b', 'c'].map((text) => pool?.run(echoTask(text))));

  expect(replies.map((reply, index) => echoed(reply, ['a', 'b', 'c'][index]))).toEqual([true, true, true]);
});

it('a call made while a prestarted worker fails to start answers TOOL_CRASHED with why, and so does the next', async () => {
  pool = await prestartedPool(['--require', '/no-such-preload.cjs']);
  pool.prestart();
  const first = await pool.run(echoTask('first'));
  const second = await pool.run(echoTask('second'));

  for (const reply of [first, second]) {
    expect(reply.ok === false && reply.error.code).toBe('TOOL_CRASHED');
    expect(reply.ok === false && reply.error.message).toMatch(/^the tool's worker could not start: /);
  }
});

it('a call aborted by its caller while the prestarted worker starts answers CALL_ABORTED, and the next call runs on that worker', async () => {
  pool = await prestartedPool();
  pool.prestart();
  const caller = new AbortController();
  const aborted = pool.run(echoTask('aborted'), { signal: caller.signal });
  caller.abort();

  const reply = await aborted;
  expect(reply.ok === false && reply.error.code).toBe('CALL_ABORTED');
  const next = await pool.run(echoTask('next'));
  expect(echoed(next, 'next')).toBe(true);
  expect(pool.occupied).toBe(1);
});
