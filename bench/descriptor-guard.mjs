/**
 * What the workers' descriptor guard (workers/guard/descriptor-*.ts, and strict's realpath check)
 * costs, against this same build with the guard switched off, in one run:
 * `node bench/descriptor-guard.mjs` after `npm run build`. The copy without it is `dist/` with the
 * two install calls in harden.js and the realpath require in strict-preload.cjs removed, written to
 * `.bench-no-descriptor-guard/` beside `dist/` (so it resolves the same node_modules) and removed
 * afterwards. Per tier: a warm call's round trip, a first call (a fresh host, so it starts a
 * worker), and a call that makes 2 × 1000 descriptor calls on a file of its own. The two builds take
 * turns call by call, so drift in the machine's load falls on both alike.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const ECHO = join(REPO, 'fixtures/modules/echo.js');
const LOOP = join(REPO, 'bench/fixtures/own-descriptor-loop.js');
const WARM_CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const COLD_STARTS = Number(process.env.BENCH_COLD ?? 10);
const LOOP_CALLS = Number(process.env.BENCH_LOOP_CALLS ?? 100);
const TIERS = (process.env.BENCH_TIERS ?? 'worker,strict').split(',');

async function buildWithoutGuard() {
  const copy = join(REPO, '.bench-no-descriptor-guard');
  await rm(copy, { recursive: true, force: true });
  await cp(join(REPO, 'dist'), join(copy, 'dist'), { recursive: true });
  const edit = async (file, from) => {
    const path = join(copy, 'dist', file);
    const text = await readFile(path, 'utf8');
    if (!text.includes(from)) throw new Error(`${file} no longer holds ${JSON.stringify(from)}`);
    await writeFile(path, text.replace(from, ''));
  };
  await edit('workers/guard/harden.js', 'guardFsDescriptors();');
  await edit('workers/guard/harden.js', 'guardDescriptorHandles();');
  await edit('workers/guard/strict-preload.cjs', "require('./strict-realpath.cjs');");
  return copy;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const median = (samples) =>
  quantile(
    [...samples].sort((a, b) => a - b),
    0.5,
  );

async function timed(host, tool, args) {
  const started = performance.now();
  const outcome = await host.call(tool, args);
  const elapsed = performance.now() - started;
  if (outcome.isError) throw new Error(`${tool} failed: ${outcome.error?.message}`);
  return elapsed;
}

async function startedHost(ToolHost, dataDir, isolation) {
  const host = new ToolHost({
    dataDir,
    isolation,
    maxThreadsPerPool: 1,
    logger: { info() {}, warn() {}, error() {} },
  });
  for (const module of [ECHO, LOOP]) {
    const report = await host.load(module);
    if (report.modules[0]?.state !== 'offered')
      throw new Error(`${module} was not offered under ${isolation}`);
  }
  return host;
}

const copy = await buildWithoutGuard();
const dataDir = await mkdtemp(join(tmpdir(), 'toolhost-bench-guard-'));
const builds = {
  guarded: (await import(pathToFileURL(join(REPO, 'dist/src/index.js')).href)).ToolHost,
  unguarded: (await import(pathToFileURL(join(copy, 'dist/src/index.js')).href)).ToolHost,
};
const rows = [];
try {
  for (const isolation of TIERS) {
    const samples = {
      guarded: { warm: [], cold: [], loop: [] },
      unguarded: { warm: [], cold: [], loop: [] },
    };
    const hosts = {};
    for (const [build, ToolHost] of Object.entries(builds))
      hosts[build] = await startedHost(ToolHost, dataDir, isolation);
    try {
      for (let index = 0; index < 100; index++)
        for (const host of Object.values(hosts)) await timed(host, 'echo', { text: 'warm-up' });
      for (let index = 0; index < WARM_CALLS; index++) {
        for (const [build, host] of Object.entries(hosts))
          samples[build].warm.push(await timed(host, 'echo', { text: `${index}` }));
      }
      for (let index = 0; index < LOOP_CALLS; index++) {
        for (const [build, host] of Object.entries(hosts))
          samples[build].loop.push(await timed(host, 'own_descriptor_loop', { count: 1000 }));
      }
    } finally {
      await Promise.all(Object.values(hosts).map((host) => host.close()));
    }
    for (let run = 0; run < COLD_STARTS; run++) {
      for (const [build, ToolHost] of Object.entries(builds)) {
        const host = await startedHost(ToolHost, dataDir, isolation);
        try {
          samples[build].cold.push(await timed(host, 'echo', { text: 'cold' }));
        } finally {
          await host.close();
        }
      }
    }
    for (const [key, label] of [
      ['warm', 'warm call'],
      ['cold', 'first call (starts a worker)'],
      ['loop', 'call making 2000 descriptor calls'],
    ]) {
      const guarded = median(samples.guarded[key]);
      const unguarded = median(samples.unguarded[key]);
      rows.push(
        `| ${isolation} | ${label} | ${unguarded.toFixed(3)} ms | ${guarded.toFixed(3)} ms | ${(guarded / unguarded).toFixed(2)}× |`,
      );
    }
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
  await rm(copy, { recursive: true, force: true });
}
console.log(
  `Node ${process.version}: ${WARM_CALLS} warm calls, ${LOOP_CALLS} descriptor-loop calls, ${COLD_STARTS} first calls per build and tier (medians)`,
);
console.log('| tier | round trip | without the guard | with it | ratio |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
