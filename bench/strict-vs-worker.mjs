/**
 * A call's round trip, strict tier against worker tier, in one run: `node bench/strict-vs-worker.mjs`
 * after `npm run build`. Warm calls reuse a started worker; a cold call includes starting one (a
 * fresh host each time). Calls run one after another, so each number is one round trip.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolHost } from '../dist/src/index.js';

const ECHO = fileURLToPath(new URL('../fixtures/modules/echo.js', import.meta.url));
const WARM_CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const COLD_STARTS = Number(process.env.BENCH_COLD ?? 10);
const TIERS = ['worker', 'strict'];

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
};

async function loadEcho(host, isolation) {
  const report = await host.load(ECHO);
  if (report.modules[0]?.state !== 'offered') throw new Error(`echo was not offered under ${isolation}`);
}

async function withHost(dataDir, isolation, use) {
  const host = new ToolHost({ dataDir, isolation, maxThreadsPerPool: 1 });
  try {
    await loadEcho(host, isolation);
    return await use(host);
  } finally {
    await host.close();
  }
}

async function timedCall(host, index) {
  const started = performance.now();
  const outcome = await host.call('echo', { text: `call ${index}` });
  const elapsed = performance.now() - started;
  if (outcome.isError) throw new Error(`echo failed: ${outcome.error?.message}`);
  return elapsed;
}

// The tiers take turns, call by call, so drift in the machine's load falls on both alike.
const dataDir = await mkdtemp(join(tmpdir(), 'toolhost-bench-'));
const samples = Object.fromEntries(TIERS.map((tier) => [tier, { warm: [], cold: [] }]));
try {
  const hosts = TIERS.map((isolation) => new ToolHost({ dataDir, isolation, maxThreadsPerPool: 1 }));
  try {
    for (const [position, host] of hosts.entries()) await loadEcho(host, TIERS[position]);
    for (let index = 0; index < 200; index++) for (const host of hosts) await timedCall(host, index);
    for (let index = 0; index < WARM_CALLS; index++) {
      for (const [position, host] of hosts.entries())
        samples[TIERS[position]].warm.push(await timedCall(host, index));
    }
  } finally {
    await Promise.all(hosts.map((host) => host.close()));
  }
  for (let run = 0; run < COLD_STARTS; run++) {
    for (const isolation of TIERS) {
      samples[isolation].cold.push(await withHost(dataDir, isolation, (host) => timedCall(host, run)));
    }
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
const results = Object.fromEntries(
  TIERS.map((tier) => [tier, { warm: summary(samples[tier].warm), cold: summary(samples[tier].cold) }]),
);

const ms = (value) => `${value.toFixed(3)} ms`;
const ratio = (key, stat) => `${(results.strict[key][stat] / results.worker[key][stat]).toFixed(2)}×`;
console.log(`Node ${process.version}, ${WARM_CALLS} warm calls and ${COLD_STARTS} cold first calls per tier`);
console.log(
  '| round trip | worker median | worker p99 | strict median | strict p99 | strict/worker (median, p99) |',
);
console.log('|---|---|---|---|---|---|');
for (const [key, label] of [
  ['warm', 'warm call'],
  ['cold', 'first call (starts a worker)'],
]) {
  const worker = results.worker[key];
  const strict = results.strict[key];
  console.log(
    `| ${label} | ${ms(worker.median)} | ${ms(worker.p99)} | ${ms(strict.median)} | ${ms(strict.p99)} | ${ratio(key, 'median')}, ${ratio(key, 'p99')} |`,
  );
}
