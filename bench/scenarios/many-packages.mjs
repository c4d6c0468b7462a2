/**
 * 14. Many packages on one host: 200 packages loaded of which 50 are active, against 50 loaded and the
 * same 50 active, in each tier. Per host: the RSS it added (the host process, and in the process
 * tier its package processes too) once every active package has its worker, the RSS each active
 * package adds, and calls/s and latency of a window of calls spread round-robin over the active
 * packages. A third host per tier runs the active packages (only they loaded) on a budget smaller
 * than they need (`maxWorkers` 0.8 × active), so calls take turns and workers are ended to make
 * room: one call in a run pays a worker's start, so its batches are a quarter as long.
 *
 * Each host is built once (its memory is measured then, before the next is built; no worker idles
 * out, so the hosts built before stay as they were); then batches of calls alternate between the
 * tier's hosts, in a new order each round, so drift hits them all. The
 * process tier runs 10 active of 40 loaded against 10 of 10: loading reads each package's
 * declarations in a process of its own, and 50 package processes would take most of the run. A
 * quick run has a quarter of the packages (12 of 50 loaded; the process tier 5 of 20).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { iterations, log, report } from '../lib/child.mjs';
import { importToolhost, quietLogger } from '../lib/library.mjs';
import { collectGarbage, runWindow, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const rounds = iterations(4, 2);
const callsPerBatch = iterations(2000, 400);
const window = 64;

const threadTier = iterations({ loaded: 200, active: 50 }, { loaded: 50, active: 12 });
const TIERS = {
  worker: threadTier,
  strict: threadTier,
  process: iterations({ loaded: 40, active: 10 }, { loaded: 20, active: 5 }),
};

const root = mkdtempSync(join(tmpdir(), 'toolhost-bench-many-'));
/** Package `index` serves one tool, `echo_<index>`. */
function writePackages(count) {
  for (let index = 0; index < count; index += 1) {
    const dir = join(root, `pkg-${index}`);
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: `pkg-${index}`, type: 'module', toolhost: { tools: ['./echo.js'] } }),
    );
    writeFileSync(
      join(dir, 'echo.js'),
      `export const name = 'echo_${index}';
export const description = 'Returns the text it is given';
export const parameterSchema = { type: 'object', properties: { text: { type: 'string' } } };
export function run(args) { return args.text; }
`,
    );
  }
}
writePackages(Math.max(...Object.values(TIERS).map((tier) => tier.loaded)));

/** Resident memory of a process and every process under it, in bytes (Linux /proc). */
function treeRss(pid) {
  let total = 0;
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift();
    try {
      const status = readFileSync(`/proc/${next}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+)/.exec(status);
      if (kb !== null) total += Number(kb[1]) * 1024;
      for (const task of readdirSync(`/proc/${next}/task`)) {
        const children = readFileSync(`/proc/${next}/task/${task}/children`, 'utf8').trim();
        if (children !== '') queue.push(...children.split(' ').map(Number));
      }
    } catch {
      // Gone in between.
    }
  }
  return total;
}

/** A host with `loaded` packages and each of the first `active` warm; what that cost in memory. */
async function buildHost({ isolation, loaded, active, maxWorkers }) {
  await collectGarbage();
  const rssBefore = treeRss(process.pid);
  // Workers never idle out here: an earlier host's workers exiting while a later one is measured
  // would come off the later one's RSS.
  const options = { logger: quietLogger(), isolation, maxThreadsPerPool: 1, idleTimeoutMs: 3_600_000 };
  const host = new ToolHost(maxWorkers === undefined ? options : { ...options, maxWorkers });
  // `switches`: a package's units ended (to make room, under a budget), for the log below.
  const workers = { most: 0, switches: 0 };
  host.on('workers', (event) => {
    workers.most = Math.max(workers.most, event.workers);
    if (event.type === 'ended' && event.source !== 'spare') workers.switches += event.count;
  });
  for (let index = 0; index < loaded; index += 1) await host.load(join(root, `pkg-${index}`));
  await collectGarbage();
  const rssLoaded = treeRss(process.pid);
  const call = (index) => host.call(`echo_${index % active}`, { text: 'hello' });
  // Every active package gets its worker, and its code warms. Under a budget too small, calls
  // take turns as they will when measured: a batch of them the way they are measured.
  if (maxWorkers === undefined) await runWindow({ total: active * 20, window: active, makeCall: call });
  else await runWindow({ total: Math.round(callsPerBatch / 4), window, makeCall: call });
  await collectGarbage();
  const rssWarm = treeRss(process.pid);
  return {
    host,
    call,
    workers,
    memory: {
      loadedMb: (rssLoaded - rssBefore) / 2 ** 20,
      warmMb: (rssWarm - rssBefore) / 2 ** 20,
      perActiveMb: (rssWarm - rssLoaded) / active / 2 ** 20,
    },
  };
}

const results = {};
/** Per tier, the budget host in one long run of calls (see below). */
const longRuns = {};
for (const [isolation, { loaded, active }] of Object.entries(TIERS)) {
  const variants = {
    [`${active} of ${active} loaded`]: { isolation, loaded: active, active, batch: callsPerBatch },
    [`${active} of ${loaded} loaded`]: { isolation, loaded, active, batch: callsPerBatch },
  };
  const maxWorkers = Math.round(active * 0.8);
  variants[`${active} of ${active} loaded, maxWorkers ${maxWorkers}`] = {
    isolation,
    loaded: active,
    active,
    maxWorkers,
    batch: Math.round(callsPerBatch / 4),
  };
  const hosts = {};
  for (const [name, variant] of Object.entries(variants)) {
    const started = performance.now();
    hosts[name] = await buildHost(variant);
    log(
      `many-packages ${isolation}: ${name} built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  const samples = Object.fromEntries(
    Object.keys(variants).map((name) => [name, { rates: [], latencies: [], switches: 0, cpuMs: 0 }]),
  );
  for (let round = 0; round < rounds; round += 1) {
    const names = Object.keys(variants);
    for (const name of round % 2 === 0 ? names : names.reverse()) {
      const total = variants[name].batch;
      const { workers } = hosts[name];
      const switchesBefore = workers.switches;
      const cpuBefore = process.cpuUsage();
      const { wallMs, latencies } = await runWindow({ total, window, makeCall: hosts[name].call });
      const cpu = process.cpuUsage(cpuBefore);
      samples[name].cpuMs += (cpu.user + cpu.system) / 1000;
      samples[name].switches += workers.switches - switchesBefore;
      samples[name].rates.push((total / wallMs) * 1000);
      samples[name].latencies.push(...latencies);
    }
    log(`many-packages ${isolation}: round ${round + 1} of ${rounds}`);
  }
  // Where a budget's time goes: how many calls each unit's end (and the start that follows) serves,
  // and the host process's CPU per switch (worker threads count; package processes don't).
  for (const [name, { switches, cpuMs }] of Object.entries(samples)) {
    if (variants[name].maxWorkers === undefined) continue;
    const calls = variants[name].batch * rounds;
    log(
      `many-packages ${isolation}: ${name}: ${calls} calls, ${switches} units ended to make room ` +
        `(${(calls / Math.max(1, switches)).toFixed(1)} calls per switch), ` +
        `host CPU ${(cpuMs / Math.max(1, switches)).toFixed(1)} ms per switch`,
    );
  }
  // The budget's steady state: one run of calls twice a batch's length on the budget host. Each batch
  // above starts again at package 0 (a burst that finds the wrong packages without a unit); a
  // caller that keeps calling is this, and a budget that thrashes only shows in it.
  const budgeted = Object.keys(variants).find((name) => variants[name].maxWorkers !== undefined);
  if (budgeted !== undefined) {
    const { workers, call } = hosts[budgeted];
    const total = callsPerBatch * 2;
    const switchesBefore = workers.switches;
    const { wallMs } = await runWindow({ total, window, makeCall: call });
    const switches = workers.switches - switchesBefore;
    longRuns[isolation] = {
      calls: total,
      callsPerSecond: (total / wallMs) * 1000,
      callsPerSwitch: total / Math.max(1, switches),
    };
    log(
      `many-packages ${isolation}: ${budgeted}: one run of ${total} calls, ` +
        `${Math.round(longRuns[isolation].callsPerSecond)} calls/s, ${longRuns[isolation].callsPerSwitch.toFixed(1)} calls per switch`,
    );
  }
  results[isolation] = {};
  for (const [name, { host, workers, memory }] of Object.entries(hosts)) {
    await host.close();
    results[isolation][name] = {
      callsPerSecond: summarize(samples[name].rates),
      latency: summarize(samples[name].latencies),
      ...memory,
      mostWorkers: workers.most,
      maxWorkers: variants[name].maxWorkers ?? 64,
    };
  }
}
rmSync(root, { recursive: true, force: true });
report({ tiers: TIERS, callsPerBatch, window, rounds, results, longRuns });
