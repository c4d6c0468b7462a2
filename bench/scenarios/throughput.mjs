/**
 * 2. Many trivial calls in parallel (a fixed number in flight), host.call in the `worker` tier against
 * raw piscina with the same thread count, and the same call in the process tier (the default) beside
 * them. Batches take turns, so drift hits all of them.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, importToolhost, quietLogger } from '../lib/library.mjs';
import { rawPiscina } from '../lib/raw-piscina.mjs';
import { runWindow, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const threads = availableParallelism();
const args = { text: 'hello' };
const window = 64;
const callsPerBatch = iterations(4000, 1500);
const batches = iterations(8, 3);

const host = new ToolHost({ logger: quietLogger(), isolation: 'worker' });
await host.load(fileURLToPath(benchToolsDir));
const processHost = new ToolHost({ logger: quietLogger(), isolation: 'process' });
await processHost.load(fileURLToPath(benchToolsDir));
const raw = rawPiscina(threads);

const variants = {
  hostCall: () => host.call('echo', args),
  rawPiscina: () => raw.run({ tool: 'echo', args }),
  hostCallProcess: () => processHost.call('echo', args),
};

// One unmeasured batch each starts the threads and warms the code.
for (const call of Object.values(variants)) await runWindow({ total: 1000, window, makeCall: call });

log(`throughput: ${batches} batches of ${callsPerBatch} calls per variant, ${window} in flight`);
const names = Object.keys(variants);
const perVariant = Object.fromEntries(
  names.map((name) => [name, { callsPerSecond: [], latencies: [], cpuPerCallMs: [] }]),
);
for (let batch = 0; batch < batches; batch += 1) {
  const shift = batch % names.length;
  const order = [...names.slice(shift), ...names.slice(0, shift)];
  for (const name of order) {
    const cpuBefore = process.cpuUsage();
    const { wallMs, latencies } = await runWindow({ total: callsPerBatch, window, makeCall: variants[name] });
    const cpu = process.cpuUsage(cpuBefore);
    // CPU of every thread of the process (host and workers) per call.
    perVariant[name].cpuPerCallMs.push((cpu.user + cpu.system) / 1000 / callsPerBatch);
    perVariant[name].callsPerSecond.push((callsPerBatch / wallMs) * 1000);
    perVariant[name].latencies.push(...latencies);
  }
}

await Promise.all([host.close(), processHost.close()]);
await raw.destroy();

const stats = Object.fromEntries(
  Object.entries(perVariant).map(([name, { callsPerSecond, latencies, cpuPerCallMs }]) => [
    name,
    {
      callsPerSecond: summarize(callsPerSecond),
      latency: summarize(latencies),
      cpuPerCall: summarize(cpuPerCallMs),
    },
  ]),
);
report({ threads, window, callsPerBatch, batches, stats });
