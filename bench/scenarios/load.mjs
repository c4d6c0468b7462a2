/**
 * 3. Loading a generated package of 100 tool modules (every declaration read in a throwaway worker)
 * against the spawn bound: the time to start and end 100 bare workers one after another, divided by
 * the cores. 100 bare workers run `cores` at a time are measured too. Iterations alternate.
 */
import { rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { iterations, log, report } from '../lib/child.mjs';
import { generatePackage } from '../lib/generate.mjs';
import { bareWorkerUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const cores = availableParallelism();
const moduleCount = 100;
const rounds = iterations(3, 1);

function spawnBareWorker() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(bareWorkerUrl);
    worker.once('error', reject);
    worker.once('exit', resolve);
  });
}

async function spawnWorkers(count, atOnce) {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      await spawnBareWorker();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: atOnce }, lane));
  return performance.now() - started;
}

const leftOut = [];

async function loadPackage(root) {
  const host = new ToolHost({ logger: quietLogger() });
  const started = performance.now();
  const loaded = await host.load(root);
  const elapsed = performance.now() - started;
  await host.close();
  // A module left out (say, a read over its time bound on a loaded machine) is reported, not hidden.
  for (const module of loaded.modules) {
    if (module.state !== 'offered')
      leftOut.push({ path: module.path, code: module.code, reason: module.reason });
  }
  return elapsed;
}

const root = await generatePackage(moduleCount);
// Unmeasured: the first load and spawns warm the file system cache and the code.
await loadPackage(root);
await spawnWorkers(cores * 2, cores);

log(
  `load: ${rounds} rounds of (load ${moduleCount} modules, ${moduleCount} spawns serial, ${moduleCount} spawns ${cores} at a time)`,
);
const samples = { load: [], spawnSerial: [], spawnParallel: [] };
// CPU time of the whole process (every thread), which the machine's other load does not inflate
// the way it inflates wall time.
const cpuMs = { load: [], spawnSerial: [], spawnParallel: [] };
async function measure(name, action) {
  const cpuBefore = process.cpuUsage();
  samples[name].push(await action());
  const cpu = process.cpuUsage(cpuBefore);
  cpuMs[name].push((cpu.user + cpu.system) / 1000);
}
for (let round = 0; round < rounds; round += 1) {
  await measure('load', () => loadPackage(root));
  await measure('spawnSerial', () => spawnWorkers(moduleCount, 1));
  await measure('spawnParallel', () => spawnWorkers(moduleCount, cores));
}
await rm(root, { recursive: true, force: true });

const stats = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
const cpu = Object.fromEntries(Object.entries(cpuMs).map(([name, list]) => [name, summarize(list)]));
report({ cores, moduleCount, rounds, stats, cpu, samples, leftOut });
