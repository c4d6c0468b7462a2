/**
 * A call worker ended at each stage of its start, and just after each, by the pool closing: the call
 * answers HOST_CLOSED, the host (this process) lives, and a new pool answers the next call. A preload
 * fixture holds the worker at each stage (fixtures/workers/start-stages.cjs). Ended just after the
 * call worker's last statement, a worker loaded through require(esm) was inside Node's `__esModule`
 * facade, whose native assertion aborted the whole process on Node 26; those rounds are many.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallSettings } from '../dist/src/boundary/protocol.js';
import { workerExecArgv } from '../dist/src/calls/isolation.js';
import { TrustDomainPool } from '../dist/src/calls/worker-pool.js';
import { echoTask } from './support/echo-task.js';

const STAGES_PRELOAD = fileURLToPath(new URL('../fixtures/workers/start-stages.cjs', import.meta.url));
/** `module.registerHooks`, which the preload needs, came in Node 22.15 and 23.5. */
const HAS_SYNC_HOOKS = (() => {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major >= 23 || (major === 22 && minor >= 15);
})();
const STAGES = [
  [1, 'preloaded, before piscina runs'],
  [2, "piscina's start message arrived"],
  [3, "the call worker's source was read"],
  [4, "the call worker's last statement ran"],
  [5, 'the worker told piscina it is ready'],
] as const;
/** Rounds ended just after a stage, each at a random point up to this many microseconds after it. */
const RACE_ROUNDS = 6;
const RACE_ROUNDS_AFTER_EVALUATION = 100;
const RACE_WINDOW_US = 60;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolhost-start-stages-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A one-thread pool of real call workers with the worker tier's flags, preloaded with the stages. */
function stagedPool(cells: Int32Array | undefined): TrustDomainPool {
  const tmpDir = join(root, 'tmp');
  const execArgv = [
    ...workerExecArgv('worker', { domain: root, tmpDir }, { allowAddons: false }),
    `--require=${STAGES_PRELOAD}`,
  ];
  const call: CallSettings = { dataDir: root, tmpDir, maxResultBytes: 65_536, maxLogChars: 1024 };
  // Spread into the workers' workerData, where the preload finds it (not a field the host knows).
  const staged = cells === undefined ? call : Object.assign({ startStages: cells.buffer }, call);
  return new TrustDomainPool(
    {
      maxThreads: 1,
      idleTimeoutMs: 30_000,
      heapMb: 64,
      stackMb: 4,
      timeoutGraceMs: 100,
      env: {},
      execArgv,
      allowAddons: false,
      call: staged,
    },
    () => {},
  );
}

/** Node has had `Atomics.waitAsync` since 16; this project's TypeScript lib predates it. */
interface AtomicsWithWaitAsync {
  waitAsync(
    cells: Int32Array,
    index: number,
    value: number,
  ): { async: false; value: string } | { async: true; value: Promise<string> };
}

/** Resolves once the worker has reached `stage`, letting it past every stage before. */
async function reach(cells: Int32Array, stage: number): Promise<void> {
  for (;;) {
    const reached = Atomics.load(cells, 0);
    if (reached === stage) return;
    if (reached > 0 && Atomics.load(cells, 1) < reached) {
      Atomics.store(cells, 1, reached);
      Atomics.notify(cells, 1);
    }
    const waited = (Atomics as unknown as AtomicsWithWaitAsync).waitAsync(cells, 0, reached);
    if (waited.async) await waited.value;
  }
}

/** Spins for up to `windowUs` microseconds: where in the next step of the worker's start it ends. */
function spinUpTo(windowUs: number): void {
  const until = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * windowUs * 1000));
  while (process.hrtime.bigint() < until) {
    // The worker runs on meanwhile; this thread only picks the moment it is ended.
  }
}

async function endAt(stage: number, mode: 'held' | 'just after'): Promise<void> {
  const cells = new Int32Array(new SharedArrayBuffer(8));
  const pool = stagedPool(cells);
  const reply = pool.run(echoTask(`stage-${stage}`));
  await reach(cells, stage);
  const closed = (() => {
    if (mode === 'held') return pool.close();
    Atomics.store(cells, 1, 99);
    Atomics.notify(cells, 1);
    spinUpTo(RACE_WINDOW_US);
    return pool.close();
  })();
  const answer = await reply;
  await closed;
  expect(answer).toMatchObject({ ok: false, error: { code: 'HOST_CLOSED' } });
}

async function expectNextPoolAnswers(): Promise<void> {
  const pool = stagedPool(undefined);
  try {
    const reply = await pool.run(echoTask('after'));
    expect(reply).toMatchObject({ ok: true });
  } finally {
    await pool.close();
  }
}

describe.skipIf(!HAS_SYNC_HOOKS)('a call worker ended while it starts', () => {
  it.each(STAGES)(
    'held at stage %i (%s): the call answers HOST_CLOSED and a new pool answers',
    async (stage) => {
      await endAt(stage, 'held');
      await expectNextPoolAnswers();
    },
  );

  it.each(STAGES)(
    'just after stage %i (%s), many rounds: every call answers HOST_CLOSED and a new pool answers',
    async (stage) => {
      const rounds = stage === 4 ? RACE_ROUNDS_AFTER_EVALUATION : RACE_ROUNDS;
      for (let round = 0; round < rounds; round += 1) await endAt(stage, 'just after');
      await expectNextPoolAnswers();
    },
  );
});
