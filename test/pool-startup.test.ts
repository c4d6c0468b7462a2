/**
 * A pool whose workers can't start (here: each is told to preload a file that isn't there, as a
 * strict tier that can't read what a worker needs would fail it) still answers every call, with the
 * reason: no call waits for a worker that will never come, and a process that holds nothing else
 * doesn't exit under it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { TrustDomainPool } from '../dist/src/calls/worker-pool.js';

let pool: TrustDomainPool | undefined;
let root: string | undefined;
afterEach(async () => {
  await pool?.close();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

it("a call whose pool can't start a worker answers TOOL_CRASHED with why, and so does the next", async () => {
  root = await mkdtemp(join(tmpdir(), 'toolhost-pool-startup-'));
  const faults: string[] = [];
  pool = new TrustDomainPool(
    {
      maxThreads: 1,
      idleTimeoutMs: 30_000,
      heapMb: 64,
      stackMb: 4,
      timeoutGraceMs: 100,
      env: {},
      execArgv: ['--require', join(root, 'no-such-preload.cjs')],
      allowAddons: false,
      call: { dataDir: root, tmpDir: join(root, 'tmp'), maxResultBytes: 65_536, maxLogChars: 1024 },
    },
    (message) => faults.push(message),
  );
  const task = (taskId: string) => ({
    kind: 'run' as const,
    taskId,
    callId: taskId,
    sessionId: 'default',
    moduleUrl: 'file:///nowhere.js',
    args: {},
    withheld: [],
    timeoutMs: 600_000,
  });

  const first = await pool.run(task('1'));
  const second = await pool.run(task('2'));

  for (const reply of [first, second]) {
    expect(reply.ok).toBe(false);
    expect(reply.ok === false && reply.error.code).toBe('TOOL_CRASHED');
    expect(reply.ok === false && reply.error.message).toMatch(/^the tool's worker could not start: /);
  }
  expect(faults.length).toBeGreaterThan(0);
});
