/**
 * What each part of a worker-tier call adds to raw piscina's round trip, measured by taking parts
 * out (`node bench/round-trip-parts.mjs` after `npm run build`; `taskset -c 0 node …` runs it on one
 * core, where no wake-up crosses cores and what is left is the work itself). Copies of this build
 * are made under `node_modules/.round-trip-parts/`, each with one part taken out of its bundled
 * files (a part whose code is not found stops the script), and every variant answers the echo tool
 * one call at a time, in a fresh random order every cycle (BENCH_CYCLES, default 3000):
 *   - toolhost: `host.call`, the build as it is;
 *   - no wait for rejections: without the wait, after the tool returns, for Node to report the
 *     rejections it left (workers/call/faults.ts);
 *   - worker answers at once: the call worker answers every task with a reply it builds and seals
 *     itself (no tool import, no `ctx`, no result encoding, no wait);
 *   - that worker, given its task by piscina directly: the same pool's `piscina.run` with the task
 *     `host.call` made, without the host's part (validation, the budget, the call's state, its
 *     deadline, the reply's parse, the outcome);
 *   - raw piscina, the round-trip scenario's baseline.
 * Nothing here is a build anyone runs: each copy drops a check the trust boundary needs.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rawPiscina } from './lib/raw-piscina.mjs';
import { interleave, runWindow, summarize } from './lib/stats.mjs';

const CYCLES = Number(process.env.BENCH_CYCLES ?? 3000);
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const copies = fileURLToPath(new URL('../node_modules/.round-trip-parts/', import.meta.url));
const tools = fileURLToPath(new URL('./fixtures/bench-tools/', import.meta.url));
const logger = { info() {}, warn() {}, error() {} };
const args = { text: 'hello' };
const POOL_KEY = 'toolhost.bench.round-trip-parts';

const CALL_WORKER = 'workers/call/call-worker.js';
const WAIT = 'await rejectionsReported();';
const HANDLER = 'return inTurn(task, () => runTask(task));';
const AT_ONCE = `return seal.seal({ ok: true, content: [{ type: "text", text: JSON.stringify({ echoed: task.args.text, callId: task.callId, sessionId: task.sessionId, withheld: [] }) }], isError: false, cutBytes: 0, logs: [], droppedLogChars: 0, progressSent: 0, logNotesSent: 0 });`;
const POOL_RUN = 'running = this.#piscina.run(tagTask(call.task), { signal: call.kill });';
const KEEP_POOL = `globalThis[Symbol.for(${JSON.stringify(POOL_KEY)})] ??= { piscina: this.#piscina, task: call.task };`;

/** A copy of dist/ named `name`, with each `[file, from, to]` replaced once (it must be there). */
function copyWith(name, replacements) {
  const folder = `${copies}${name}/`;
  rmSync(folder, { recursive: true, force: true });
  cpSync(dist, folder, { recursive: true });
  for (const [file, from, to] of replacements) {
    const text = readFileSync(`${folder}${file}`, 'utf8');
    if (!text.includes(from)) throw new Error(`${file} of this build has no \`${from}\`: update this script`);
    writeFileSync(`${folder}${file}`, text.replace(from, to));
  }
  return folder;
}

async function hostOf(folder) {
  const { ToolHost } = await import(pathToFileURL(`${folder}src/index.js`).href);
  const host = new ToolHost({ logger, maxThreadsPerPool: 1, isolation: 'worker' });
  await host.load(tools);
  return host;
}

const noWait = copyWith('no-wait', [[CALL_WORKER, WAIT, ';']]);
const atOnce = copyWith('at-once', [
  [CALL_WORKER, HANDLER, AT_ONCE],
  ['src/index.js', POOL_RUN, `${KEEP_POOL} ${POOL_RUN}`],
]);
const hosts = {
  toolhost: await hostOf(dist),
  'no wait for rejections': await hostOf(noWait),
  'worker answers at once': await hostOf(atOnce),
};
await hosts['worker answers at once'].call('echo', args);
const kept = globalThis[Symbol.for(POOL_KEY)];
const raw = rawPiscina();
let direct = 0;
const variants = {
  ...Object.fromEntries(Object.entries(hosts).map(([name, host]) => [name, () => host.call('echo', args)])),
  'that worker, given its task by piscina directly': () =>
    kept.piscina.run({ ...kept.task, taskId: `direct_${++direct}` }),
  'raw piscina': () => raw.run({ tool: 'echo', args }),
};
for (const call of Object.values(variants)) await runWindow({ total: 1000, window: 1, makeCall: call });
const samples = await interleave({ variants, cycles: CYCLES, warmupCycles: 200 });
await Promise.all([...Object.values(hosts).map((host) => host.close()), raw.destroy()]);
rmSync(copies, { recursive: true, force: true });

const median = (name) => summarize(samples[name]).median * 1000;
const base = median('raw piscina');
console.log(`${CYCLES} round trips per variant, one call at a time, medians`);
console.log('| Variant | Round trip | vs raw piscina |');
console.log('| --- | --- | --- |');
for (const name of Object.keys(variants)) {
  console.log(`| ${name} | ${median(name).toFixed(0)} µs | ${(median(name) / base).toFixed(2)}× |`);
}
