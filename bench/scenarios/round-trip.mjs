/**
 * 1. One call at a time: host.call of a trivial tool in the `worker` tier (validation, encoding,
 * bookkeeping, a pooled worker) against a raw piscina run of the same function, a plain in-process
 * call, the host's own in-process tool path, and a fresh Worker per call; beside them, the same call
 * in the process tier (the default). Round-robin, interleaved per call.
 */
import { rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { run as echo } from '../fixtures/bench-tools/echo.js';
import { iterations, log, report } from '../lib/child.mjs';
import { generatePackage } from '../lib/generate.mjs';
import { benchToolsDir, freshWorkerUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { rawPiscina } from '../lib/raw-piscina.mjs';
import { interleave, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const threads = availableParallelism();
const args = { text: 'hello' };

// The targets name the worker tier (raw piscina's own kind of pool); the default tier is reported beside.
const host = new ToolHost({ logger: quietLogger(), isolation: 'worker' });
await host.load(fileURLToPath(benchToolsDir));
const processHost = new ToolHost({ logger: quietLogger(), isolation: 'process' });
await processHost.load(fileURLToPath(benchToolsDir));
const generatedRoot = await generatePackage(100);
await host.load(generatedRoot);
host.register({
  name: 'echo_in_process',
  description: 'The same echo, as a host tool',
  parameterSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: echo,
});

// The raw baseline mirrors the host pool's thread settings: no workers until needed, up to one per
// core, idle workers kept for 30 s.
const raw = rawPiscina(threads);

function freshWorkerCall() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(freshWorkerUrl, { workerData: args });
    let value;
    worker.once('message', (message) => {
      value = message;
    });
    worker.once('error', reject);
    worker.once('exit', () => resolve(value));
  });
}

const variants = {
  inProcess: async () => echo(args),
  hostInProcessTool: () => host.call('echo_in_process', args),
  rawPiscina: () => raw.run({ tool: 'echo', args }),
  hostCall: () => host.call('echo', args),
  hostCall100: () => host.call('generated_7', { query: 'hello' }),
  hostCallProcess: () => processHost.call('echo', args),
  freshWorker: freshWorkerCall,
};

// Both pools start all their threads before anything is measured.
await Promise.all(Array.from({ length: threads * 4 }, () => host.call('echo', args)));
await Promise.all(Array.from({ length: threads * 4 }, () => host.call('generated_7', { query: 'hello' })));
await Promise.all(Array.from({ length: threads * 4 }, () => raw.run({ tool: 'echo', args })));
await Promise.all(Array.from({ length: threads * 4 }, () => processHost.call('echo', args)));
for (const each of [host, processHost]) {
  const check = await each.call('echo', args);
  if (check.isError || check.content[0]?.text !== 'hello')
    throw new Error(`echo answered ${JSON.stringify(check)}`);
}

const cycles = iterations(4000, 800);
const freshEvery = iterations(50, 50);
log(`round trip: ${cycles} cycles, a fresh worker every ${freshEvery}`);
const samples = await interleave({
  variants,
  cycles,
  warmupCycles: iterations(300, 100),
  every: { freshWorker: freshEvery },
});

await Promise.all([host.close(), processHost.close()]);
await raw.destroy();
await rm(generatedRoot, { recursive: true, force: true });

const stats = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
report({ threads, cycles, stats });
