/**
 * 10. What checking against a lock costs at load: a generated package of 50 modules loaded by a
 * fresh host without a lock and by one with a lock that pins every module (read, digest of every
 * declaration, comparison), in alternating random order, so the machine's noise falls on both.
 */

import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { iterations, log, report } from '../lib/child.mjs';
import { generatePackage } from '../lib/generate.mjs';
import { distUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const moduleCount = 50;
const rounds = iterations(8, 3);

const root = await generatePackage(moduleCount);
const lockFile = join(root, '..', `${root.split('/').pop()}.lock.json`);
const leftOut = [];

async function loadWith(options) {
  const host = new ToolHost({ logger: quietLogger(), ...options });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const loaded = await host.load(root);
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await host.close();
  for (const module of loaded.modules) {
    if (module.state !== 'offered')
      leftOut.push({ path: module.path, code: module.code, reason: module.reason });
  }
  return { elapsed, cpuMs: (cpu.user + cpu.system) / 1000 };
}

// Unmeasured: pinning every module, and one load of each kind to warm the caches and the code.
{
  const pinner = new ToolHost({ logger: quietLogger() });
  await pinner.load(root);
  await pinner.pin({ lockFile });
  await pinner.close();
}
await loadWith({});
await loadWith({ lockFile });

log(`lock-load: ${rounds} rounds of (load ${moduleCount} modules without a lock, with one), in random order`);
const variants = { noLock: {}, lock: { lockFile } };
const samples = { noLock: [], lock: [] };
const cpuMs = { noLock: [], lock: [] };
for (let round = 0; round < rounds; round += 1) {
  const order = Math.random() < 0.5 ? ['noLock', 'lock'] : ['lock', 'noLock'];
  for (const name of order) {
    const { elapsed, cpuMs: cpu } = await loadWith(variants[name]);
    samples[name].push(elapsed);
    cpuMs[name].push(cpu);
  }
}
// The check alone, without the reads around it: the lock read and parsed, and every module's
// declaration digested (fresh copies, so no digest is remembered) and compared.
const { Pins } = await import(new URL('src/lock/pins.js', distUrl).href);
const pinned = JSON.parse(readFileSync(lockFile, 'utf8')).tools;
const checkMs = [];
for (let repeat = 0; repeat < 30; repeat += 1) {
  const infos = pinned.map((entry) => structuredClone(entry.declaration));
  const started = performance.now();
  const pins = new Pins(lockFile, () => {});
  for (const [index, entry] of pinned.entries()) {
    const verdict = pins.verdict(
      { kind: 'package', packageName: entry.package, root, path: join(root, entry.module) },
      infos[index],
      entry.content,
    );
    if (verdict !== undefined) throw new Error(`the check refused ${entry.module}: ${verdict.reason}`);
  }
  checkMs.push(performance.now() - started);
}
await rm(root, { recursive: true, force: true });
await rm(lockFile, { force: true });

const stats = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
const cpu = Object.fromEntries(Object.entries(cpuMs).map(([name, list]) => [name, summarize(list)]));
report({ moduleCount, rounds, stats, cpu, samples, leftOut, check: summarize(checkMs.slice(5)) });
