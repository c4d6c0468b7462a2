/**
 * Where the host's main thread spends a parallel call, against raw piscina's, in one process
 * (`node bench/host-thread-profile.mjs` after `npm run build`; TOOLHOST_BENCH_DIST=<folder laid out
 * like dist/> profiles another build, as for the other benchmarks). Both run the echo tool with 64 calls
 * in flight on a pool of one thread per core; BENCH_ROUNDS rounds (default 2) of BENCH_CALLS calls
 * (default 20000) each, the two variants in turns within a round. Every batch runs twice, under:
 *   1. V8's CPU profiler (a sample every 100 µs of the main thread's wall time, what the thread was
 *      doing, or idle): µs per call by where the time went;
 *   2. V8's sampling heap profiler, counting objects that garbage collection has already freed too:
 *      bytes allocated per call, and the functions that allocate the most of it in the host.
 * A sample lands where the thread was, so a syscall that lets another thread take the core (waking a
 * worker) counts its whole wait. Read the categories against each other, not as CPU.
 */
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { benchToolsDir, distUrl as dist, importToolhost, quietLogger } from './lib/library.mjs';
import { rawPiscina } from './lib/raw-piscina.mjs';
import { runWindow } from './lib/stats.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const WINDOW = 64;
const { ToolHost } = await importToolhost();
const args = { text: 'hello' };

const host = new ToolHost({ logger: quietLogger(), isolation: 'worker' });
await host.load(fileURLToPath(benchToolsDir));
const raw = rawPiscina();
const variants = {
  'host.call': () => host.call('echo', args),
  'raw piscina': () => raw.run({ tool: 'echo', args }),
};
for (const call of Object.values(variants)) await runWindow({ total: 4000, window: WINDOW, makeCall: call });

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('HeapProfiler.enable');

/** Where a profile node's time goes: toolhost's own code, piscina's, or one of V8's and Node's own. */
function category({ functionName, url }) {
  if (functionName === '(idle)') return 'idle (waiting for a message)';
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)') return 'V8 and Node outside JavaScript';
  if (functionName === 'postTask' && url.includes('piscina')) return "piscina's postTask (Atomics.notify)";
  if (functionName === 'postMessage' && url === '') return 'postMessage (native)';
  if (url.startsWith(dist.href)) return "toolhost's own code";
  if (url.includes('/piscina/')) return "piscina's other code";
  return "Node's and V8's other functions";
}

const cpu = Object.fromEntries(Object.keys(variants).map((name) => [name, new Map()]));
const allocated = Object.fromEntries(Object.keys(variants).map((name) => [name, new Map()]));
const add = (map, key, value) => map.set(key, (map.get(key) ?? 0) + value);

for (let round = 0; round < ROUNDS; round += 1) {
  const order = round % 2 === 0 ? Object.keys(variants) : Object.keys(variants).reverse();
  for (const name of order) {
    await session.post('Profiler.start');
    await runWindow({ total: CALLS, window: WINDOW, makeCall: variants[name] });
    const { profile } = await session.post('Profiler.stop');
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    profile.samples.forEach((id, index) => {
      add(cpu[name], category(nodes.get(id).callFrame), profile.timeDeltas[index] ?? 0);
    });

    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    await runWindow({ total: CALLS, window: WINDOW, makeCall: variants[name] });
    const { profile: heap } = await session.post('HeapProfiler.stopSampling');
    const walk = (node) => {
      const { functionName, url, lineNumber } = node.callFrame;
      const file = url.startsWith(dist.href)
        ? url.slice(dist.href.length)
        : url.replace(/.*\/node_modules\//, '');
      if (node.selfSize > 0)
        add(allocated[name], `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`, node.selfSize);
      for (const child of node.children) walk(child);
    };
    walk(heap.head);
  }
}
await Promise.all([host.close(), raw.destroy()]);
session.disconnect();

const calls = ROUNDS * CALLS;
const perCall = (value) => value / calls;
const total = (map) => [...map.values()].reduce((sum, value) => sum + value, 0);
const names = Object.keys(variants);
console.log(
  `${ROUNDS} rounds of ${CALLS} calls per variant, ${WINDOW} in flight, ${raw.options.maxThreads} threads`,
);
console.log(`\nThe main thread's wall time per call (CPU profile samples):\n`);
console.log(`| Where | ${names.join(' | ')} |`);
console.log(`| --- |${names.map(() => ' --- |').join('')}`);
const categories = [...new Set(names.flatMap((name) => [...cpu[name].keys()]))].sort(
  (a, b) => (cpu[names[0]].get(b) ?? 0) - (cpu[names[0]].get(a) ?? 0),
);
for (const where of categories) {
  console.log(
    `| ${where} | ${names.map((name) => `${perCall(cpu[name].get(where) ?? 0).toFixed(1)} µs`).join(' | ')} |`,
  );
}
console.log(`| **all** | ${names.map((name) => `${perCall(total(cpu[name])).toFixed(1)} µs`).join(' | ')} |`);
console.log(`\nAllocated per call (sampled, freed objects included):`);
for (const name of names) console.log(`- ${name}: ${perCall(total(allocated[name])).toFixed(0)} bytes`);
console.log(`\nThe host's largest allocators per call:\n`);
for (const [where, bytes] of [...allocated[names[0]]].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
  console.log(`- ${perCall(bytes).toFixed(0)} bytes: ${where}`);
}
