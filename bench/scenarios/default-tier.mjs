/**
 * 17. What the default tier costs: a host that names no tier (it runs the strongest this machine
 * has, the process tier: in bubblewrap where it works) against one that names `worker`, side by side
 * in one run, as ratios. The first call a user waits for (a fresh host: the package loaded, then
 * one call answered; variants in turns), and the memory an active package holds (loaded and called,
 * its worker or process still up): in the worker tier all of it is the host's; in the process tier
 * it is the host's share plus its own process's PSS (the host's one ready spare apart). Also the
 * one-time probe a process pays to find what holds a package in it (a trial sandbox).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, distUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { memoryOf, settledHostRss, settledSpare } from '../lib/process-memory.mjs';
import { summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const { processTierHold } = await import(new URL('src/process/sandbox/process-tier.js', distUrl).href);
const { DEFAULT_TIER } = await import(new URL('src/calls/isolation.js', distUrl).href);
const { descendantsOf } = await import(new URL('src/shared/process-tree.js', distUrl).href);
const args = { text: 'hello' };
/** The variants: the worker tier by name, and the default (no `isolation`). */
const VARIANTS = { worker: { isolation: 'worker' }, default: {} };
const NAMES = Object.keys(VARIANTS);
const scratch = await mkdtemp(join(tmpdir(), 'toolhost-bench-default-'));
let copies = 0;

/** A fresh package no host has read or run yet: the bench tools' echo, as `echo_<n>`. */
async function freshPackage() {
  const n = ++copies;
  const folder = join(scratch, `pkg-${n}`);
  await mkdir(folder);
  const echo = await readFile(new URL('echo.js', benchToolsDir), 'utf8');
  await writeFile(join(folder, 'echo.js'), echo.replace("name = 'echo'", `name = 'echo_${n}'`));
  const manifest = { name: `bench-default-${n}`, type: 'module', toolhost: { tools: ['./echo.js'] } };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return { folder, tool: `echo_${n}` };
}

async function called(host, { tool }, variant) {
  const outcome = await host.call(tool, args);
  if (outcome.isError) throw new Error(`${variant}: ${tool} answered ${JSON.stringify(outcome)}`);
}

// 0. The probe: once per process, before anything else has looked.
let started = performance.now();
const hold = await processTierHold();
const probeMs = performance.now() - started;
const strongest = {
  tier: DEFAULT_TIER,
  sandboxed: hold === 'sandbox',
  permissionModel: hold === 'permission-model',
};
log(`default tier: ${strongest.tier}${strongest.sandboxed ? ' in bubblewrap' : ' without a sandbox'}`);

// 1. The first call: a fresh host and a fresh package, to its first answer.
const rounds = iterations(10, 4);
const firstCall = Object.fromEntries(NAMES.map((name) => [name, []]));
const tiers = {};
for (let round = 0; round < rounds; round += 1) {
  for (const name of round % 2 === 0 ? NAMES : [...NAMES].reverse()) {
    const made = await freshPackage();
    started = performance.now();
    const host = new ToolHost({ logger: quietLogger(), ...VARIANTS[name] });
    await host.load(made.folder);
    await called(host, made, name);
    firstCall[name].push(performance.now() - started);
    tiers[name] = host.status()[0]?.isolation;
    await host.close();
    await rm(made.folder, { recursive: true, force: true });
  }
}

// 2. Memory per active package, one variant after the other.
const packages = iterations(6, 3);
const memory = {};
for (const name of NAMES) {
  const before = await settledHostRss();
  const childrenBefore = memoryOf(descendantsOf(process.pid));
  const host = new ToolHost({ logger: quietLogger(), idleTimeoutMs: 600_000, ...VARIANTS[name] });
  const made = [];
  for (let index = 0; index < packages; index += 1) made.push(await freshPackage());
  for (const each of made) {
    await host.load(each.folder);
    await called(host, each, name);
  }
  const sandboxedProcesses = tiers[name] === 'process' && strongest.sandboxed;
  const spare = sandboxedProcesses ? await settledSpare() : new Set();
  const hostRss = (await settledHostRss()) - before;
  const children = memoryOf(descendantsOf(process.pid).filter((pid) => !spare.has(pid)));
  const childPss = (children.pss - childrenBefore.pss) / packages;
  memory[name] = {
    packages,
    hostRssPerPackage: hostRss / packages,
    childPssPerPackage: childPss,
    totalPerPackage: hostRss / packages + childPss,
  };
  await host.close();
  for (const { folder } of made) await rm(folder, { recursive: true, force: true });
}
await rm(scratch, { recursive: true, force: true });

const firstCalls = Object.fromEntries(NAMES.map((name) => [name, summarize(firstCall[name])]));
report({
  strongest,
  tiers,
  probeMs,
  rounds,
  firstCall: firstCalls,
  memory,
  ratios: {
    firstCall: firstCalls.default.median / firstCalls.worker.median,
    memoryPerActivePackage: memory.default.totalPerPackage / memory.worker.totalPerPackage,
  },
});
