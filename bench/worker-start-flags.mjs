/**
 * What the start-up changes cost, side by side in one run (`node bench/worker-start-flags.mjs` after
 * `npm run build`; `BENCH_STARTS`, `BENCH_CALLS` to change the counts), interleaved:
 * 1. a call worker's start (pool made to first answer) and a warm call, piscina loading the call
 *    worker through require(esm) (as before) against the CommonJS entry with require(esm) off;
 * 2. the process tier without a sandbox: a package process's start (to its first answer) and a warm
 *    call, its workers with the worker tier's flags (as before) against strict's grants.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Before the process tier first looks for bubblewrap: this process has none.
process.env.PATH = '';

const { Piscina } = createRequire(import.meta.url)('piscina');
const { workerExecArgv } = await import('../dist/src/calls/isolation.js');
const { ProcessDomainPool } = await import('../dist/src/process/pool/process-pool.js');
const { processEnvironment } = await import('../dist/src/process/sandbox/process-tier.js');

const STARTS = Number(process.env.BENCH_STARTS ?? 20);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const ECHO = fileURLToPath(new URL('../fixtures/modules/echo.js', import.meta.url));
const OLD_ENTRY = fileURLToPath(new URL('../dist/workers/call/call-worker.js', import.meta.url));
const NEW_ENTRY = fileURLToPath(new URL('../dist/workers/call/entry.cjs', import.meta.url));

const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
const root = await mkdtemp(join(tmpdir(), 'toolhost-bench-start-flags-'));
const call = { dataDir: root, tmpDir: join(root, 'tmp'), maxResultBytes: 65_536, maxLogChars: 1024 };
const task = (taskId) => ({
  kind: 'run',
  taskId,
  callId: taskId,
  sessionId: 'bench',
  moduleUrl: pathToFileURL(ECHO).href,
  args: { text: taskId },
  withheld: [],
  timeoutMs: 60_000,
});
let ids = 0;

/** A call that did not answer would measure nothing: it ends the run. */
async function answered(reply) {
  const value = await reply;
  if (value?.ok !== true) throw new Error(`a bench call failed: ${JSON.stringify(value)}`);
}

/** One pool: ms from its making to its first answer, and the median ms of warm calls after. */
async function measure(makePool, run, close) {
  const started = performance.now();
  const pool = makePool();
  await answered(run(pool, task(`t${ids++}`)));
  const start = performance.now() - started;
  const warm = [];
  for (let index = 0; index < CALLS / STARTS; index += 1) {
    const before = performance.now();
    await answered(run(pool, task(`t${ids++}`)));
    warm.push(performance.now() - before);
  }
  await close(pool);
  return { start, warm: median(warm) };
}

function threads(filename, execArgv) {
  return () =>
    new Piscina({
      filename,
      minThreads: 0,
      maxThreads: 1,
      execArgv,
      workerData: { allowAddons: false, ...call },
    });
}
const piscinaRun = (pool, t) => pool.run(t);
const piscinaClose = (pool) => pool.destroy();

const limits = (execArgv) => ({
  maxThreads: 1,
  idleTimeoutMs: 30_000,
  heapMb: 64,
  stackMb: 4,
  timeoutGraceMs: 100,
  env: {},
  execArgv,
  allowAddons: false,
  call,
});
function processPool(unsandboxedExecArgv) {
  return () =>
    new ProcessDomainPool({
      limits: limits(['--no-addons']),
      unsandboxedLimits: { ...limits(unsandboxedExecArgv), permissionTier: 'process' },
      paths: { readOnly: [], tmpDir: call.tmpDir, network: false },
      memoryMb: 512,
      environment: processEnvironment,
      onFault: () => {},
    });
}
const poolRun = (pool, t) => pool.run(t);
const poolClose = (pool) => pool.close();

const strictFlags = workerExecArgv('strict', { domain: ECHO, tmpDir: call.tmpDir }, { allowAddons: false });
const variants = {
  'call worker via require(esm) (before)': [threads(OLD_ENTRY, ['--no-addons']), piscinaRun, piscinaClose],
  'CommonJS entry, require(esm) off (now)': [
    threads(NEW_ENTRY, ['--no-experimental-require-module', '--no-addons']),
    piscinaRun,
    piscinaClose,
  ],
  'process, no sandbox, worker flags (before)': [processPool(['--no-addons']), poolRun, poolClose],
  "process, no sandbox, strict's grants (now)": [processPool(strictFlags), poolRun, poolClose],
};
const results = Object.fromEntries(Object.keys(variants).map((name) => [name, { start: [], warm: [] }]));
for (let round = 0; round < STARTS; round += 1) {
  for (const [name, [make, run, close]] of Object.entries(variants)) {
    const { start, warm } = await measure(make, run, close);
    results[name].start.push(start);
    results[name].warm.push(warm);
  }
}
await rm(root, { recursive: true, force: true });

console.log(`Node ${process.version}, ${STARTS} starts and ${CALLS} warm calls per variant, interleaved`);
const rows = Object.entries(results).map(([name, { start, warm }]) => [name, median(start), median(warm)]);
for (const [name, start, warm] of rows) {
  console.log(
    `${name.padEnd(44)} start ${start.toFixed(1).padStart(7)} ms   warm call ${(warm * 1000).toFixed(0).padStart(6)} µs`,
  );
}
const ratio = (a, b) => (a / b).toFixed(2);
console.log(
  `start ratio, entry now/before: ${ratio(rows[1][1], rows[0][1])}; warm ratio: ${ratio(rows[1][2], rows[0][2])}`,
);
console.log(
  `start ratio, no-sandbox process now/before: ${ratio(rows[3][1], rows[2][1])}; warm ratio: ${ratio(rows[3][2], rows[2][2])}`,
);
