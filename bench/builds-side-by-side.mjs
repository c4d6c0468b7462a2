/**
 * This build against another one, side by side in one process, with raw piscina as the baseline of
 * both: `node bench/builds-side-by-side.mjs <other dist/>` after `npm run build` (the other build is
 * a folder laid out like dist/, such as a worktree's at an earlier commit, with its node_modules).
 *   1. the round trip of the echo tool, one call at a time, the three variants in a fresh random
 *      order every cycle (BENCH_CYCLES, default 4000);
 *   2. parallel throughput, 64 in flight, batches of BENCH_CALLS calls (default 4000) rotating
 *      among the three (BENCH_BATCHES, default 8), with the CPU of the whole process per call.
 * Each host runs a pool of one thread per core (as raw piscina does), started before measuring.
 * Run it once against a copy of this build in another folder too (`cp -r dist node_modules/.same`,
 * where its packages resolve and git doesn't look): eight
 * such runs on Node 20 differed by 0–18 µs in the round trip and by up to 0.10× in throughput,
 * either way, the same code on both; differences between two builds no larger than that are noise.
 * (With both hosts from the same folder, two runs put the first host 0.08–0.14× ahead.)
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rawPiscina } from './lib/raw-piscina.mjs';
import { interleave, runWindow, summarize } from './lib/stats.mjs';

const other = process.argv[2];
if (other === undefined) {
  process.stderr.write('Usage: node bench/builds-side-by-side.mjs <folder laid out like dist/>\n');
  process.exit(2);
}
const CYCLES = Number(process.env.BENCH_CYCLES ?? 4000);
const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 8);
const threads = availableParallelism();
const tools = fileURLToPath(new URL('./fixtures/bench-tools/', import.meta.url));
const logger = { info() {}, warn() {}, error() {} };
const args = { text: 'hello' };

async function hostOf(dist) {
  const { ToolHost } = await import(new URL('src/index.js', dist).href);
  const host = new ToolHost({ logger, isolation: 'worker' });
  await host.load(tools);
  return host;
}
const thisBuild = await hostOf(new URL('../dist/', import.meta.url));
const otherBuild = await hostOf(new URL(`${pathToFileURL(resolve(other)).href}/`));
const raw = rawPiscina(threads);
const variants = {
  'this build': () => thisBuild.call('echo', args),
  [`the build in ${other}`]: () => otherBuild.call('echo', args),
  'raw piscina': () => raw.run({ tool: 'echo', args }),
};
const names = Object.keys(variants);
const baseline = 'raw piscina';
for (const call of Object.values(variants)) await runWindow({ total: 1000, window: 64, makeCall: call });

const latencies = await interleave({ variants, cycles: CYCLES, warmupCycles: 0 });
const batches = Object.fromEntries(names.map((name) => [name, { perSecond: [], cpuUs: [] }]));
for (let batch = 0; batch < BATCHES; batch += 1) {
  for (const name of [...names.slice(batch % names.length), ...names.slice(0, batch % names.length)]) {
    const cpu = process.cpuUsage();
    const { wallMs } = await runWindow({ total: CALLS, window: 64, makeCall: variants[name] });
    const used = process.cpuUsage(cpu);
    batches[name].perSecond.push((CALLS / wallMs) * 1000);
    batches[name].cpuUs.push((used.user + used.system) / CALLS);
  }
}
await Promise.all([thisBuild.close(), otherBuild.close(), raw.destroy()]);

const roundTrip = (name) => summarize(latencies[name]).median * 1000;
const perSecond = (name) => summarize(batches[name].perSecond).median;
const cpuUs = (name) => summarize(batches[name].cpuUs).median;
console.log(`${CYCLES} round trips and ${BATCHES} batches of ${CALLS} calls per variant, ${threads} threads`);
console.log(
  '| Variant | Round trip (median) | vs raw | Calls/s (median batch) | vs raw | CPU per call | vs raw |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const name of names) {
  const ratio = (value, base) => `${(value / base).toFixed(2)}×`;
  console.log(
    `| ${name} | ${roundTrip(name).toFixed(0)} µs | ${ratio(roundTrip(name), roundTrip(baseline))} | ` +
      `${perSecond(name).toFixed(0)}/s | ${ratio(perSecond(name), perSecond(baseline))} | ` +
      `${cpuUs(name).toFixed(0)} µs | ${ratio(cpuUs(name), cpuUs(baseline))} |`,
  );
}
