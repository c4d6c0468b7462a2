/**
 * 9. What the process tier costs, against the worker tier in the same run: the first call to a
 * fresh package (a worker to start, or a process, sandboxed where bubblewrap is, with its pool),
 * loading it (declarations read in the host's workers, or in a throwaway process), the memory an
 * idle package holds after one call (the host's ready spare apart), and the warm `host.call` round trip of a trivial tool. First
 * calls and round trips alternate tier by tier; memory is measured one tier after the other.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, distUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { memoryOf, settledHostRss, settledSpare } from '../lib/process-memory.mjs';
import { interleave, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const { processEnvironment } = await import(new URL('src/process/sandbox/process-tier.js', distUrl).href);
const { descendantsOf } = await import(new URL('src/shared/process-tree.js', distUrl).href);
const environment = await processEnvironment();
const args = { text: 'hello' };
const TIERS = ['worker', 'process'];
const scratch = await mkdtemp(join(tmpdir(), 'toolhost-bench-process-'));
let copies = 0;

/**
 * A fresh package no host has read or run yet: the bench tools' echo, named `echo_<n>` so that many
 * of them can be offered side by side.
 */
async function freshPackage() {
  const n = ++copies;
  const folder = join(scratch, `pkg-${n}`);
  await mkdir(folder);
  const echo = await readFile(new URL('echo.js', benchToolsDir), 'utf8');
  await writeFile(join(folder, 'echo.js'), echo.replace("name = 'echo'", `name = 'echo_${n}'`));
  const manifest = { name: `bench-echo-${n}`, type: 'module', toolhost: { tools: ['./echo.js'] } };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return { folder, tool: `echo_${n}` };
}

// 1. First call to a fresh package, and its load, tier by tier in turns.
const firstCalls = iterations(12, 4);
const startup = Object.fromEntries(TIERS.map((tier) => [tier, { load: [], firstCall: [] }]));
log(`process tier: ${firstCalls} fresh packages per tier`);
for (let round = 0; round < firstCalls; round += 1) {
  for (const tier of round % 2 === 0 ? TIERS : [...TIERS].reverse()) {
    const host = new ToolHost({ logger: quietLogger(), isolation: tier });
    const { folder, tool } = await freshPackage();
    let started = performance.now();
    await host.load(folder);
    startup[tier].load.push(performance.now() - started);
    started = performance.now();
    const outcome = await host.call(tool, args);
    startup[tier].firstCall.push(performance.now() - started);
    if (outcome.isError) throw new Error(`${tier}: echo answered ${JSON.stringify(outcome)}`);
    await host.close();
    await rm(folder, { recursive: true, force: true });
  }
}

// 2. Memory of idle packages: each called once, then left alone (its pool's threads still there).
const packages = iterations(6, 3);
const memory = {};
for (const tier of TIERS) {
  const before = await settledHostRss();
  const childrenBefore = memoryOf(descendantsOf(process.pid));
  const host = new ToolHost({ logger: quietLogger(), isolation: tier });
  const made = [];
  for (let index = 0; index < packages; index += 1) made.push(await freshPackage());
  for (const { folder, tool } of made) {
    await host.load(folder);
    const outcome = await host.call(tool, args);
    if (outcome.isError) throw new Error(`${tier}: ${tool} answered ${JSON.stringify(outcome)}`);
  }
  // The host's ready spare is not a package's: it is one per host, whatever its packages.
  const spare = tier === 'process' && environment.sandbox.available ? await settledSpare() : new Set();
  const hostRss = (await settledHostRss()) - before;
  const below = descendantsOf(process.pid);
  const children = memoryOf(below.filter((pid) => !spare.has(pid)));
  memory[tier] = {
    packages,
    hostRssPerPackage: hostRss / packages,
    childRssPerPackage: (children.rss - childrenBefore.rss) / packages,
    childPssPerPackage: (children.pss - childrenBefore.pss) / packages,
    ...(spare.size === 0 ? {} : { spareRss: memoryOf(spare).rss, sparePss: memoryOf(spare).pss }),
  };
  await host.close();
  for (const { folder } of made) await rm(folder, { recursive: true, force: true });
}

// 3. Warm round trip of a trivial tool, interleaved call by call.
const hosts = {};
const tools = {};
for (const tier of TIERS) {
  hosts[tier] = new ToolHost({ logger: quietLogger(), isolation: tier });
  const { folder, tool } = await freshPackage();
  tools[tier] = tool;
  await hosts[tier].load(folder);
  await Promise.all(Array.from({ length: 16 }, () => hosts[tier].call(tool, args)));
}
const cycles = iterations(3000, 600);
const samples = await interleave({
  variants: Object.fromEntries(TIERS.map((tier) => [tier, () => hosts[tier].call(tools[tier], args)])),
  cycles,
  warmupCycles: iterations(300, 100),
});
for (const tier of TIERS) await hosts[tier].close();
await rm(scratch, { recursive: true, force: true });

const summarizeAll = (record) =>
  Object.fromEntries(Object.entries(record).map(([key, list]) => [key, summarize(list)]));
report({
  sandbox: environment.sandbox.available ? 'bubblewrap' : `none (${environment.sandbox.reason})`,
  memoryLimit: environment.cgroups.available ? `cgroup v${environment.cgroups.version}` : 'RSS watchdog',
  firstCalls,
  startup: Object.fromEntries(TIERS.map((tier) => [tier, summarizeAll(startup[tier])])),
  memory,
  cycles,
  roundTrip: summarizeAll(samples),
});
