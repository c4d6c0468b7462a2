/**
 * Many packages on one host: 200 packages loaded of which 50 are active, against 50 loaded and the
 * same 50 active, in each tier. Per host: its RSS (the host process, and in the process tier its
 * package processes too) once every active package has its worker, the RSS each active package
 * adds, and calls/s and latency of a window of calls spread round-robin over the active packages.
 * A third row per thread tier runs the 50 active packages on a budget smaller than they need
 * (`maxWorkers` 16), so every call waits its turn and idle workers are ended to make room.
 *
 * The process tier runs 10 active of 40 loaded against 10 of 10: loading reads each package's
 * declarations in a process of its own, and 50 package processes would take most of the run.
 * Hosts run one at a time (their memory is their own), the variants alternating order per cycle.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { iterations, log, report } from '../lib/child.mjs';
import { importToolhost, quietLogger } from '../lib/library.mjs';
import { collectGarbage, runWindow, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const cycles = iterations(3, 1);
const callsPerHost = iterations(4000, 1000);
const window = 64;

const TIERS = {
  worker: { loaded: 200, active: 50, baseline: 50 },
  strict: { loaded: 200, active: 50, baseline: 50 },
  process: { loaded: 40, active: 10, baseline: 10 },
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

async function measureHost({ isolation, loaded, active, maxWorkers }) {
  await collectGarbage();
  const rssBefore = treeRss(process.pid);
  const host = new ToolHost({ logger: quietLogger(), isolation, maxThreadsPerPool: 1, maxWorkers });
  const workers = { most: 0 };
  host.on('workers', (event) => {
    workers.most = Math.max(workers.most, event.workers);
  });
  for (let index = 0; index < loaded; index += 1) await host.load(join(root, `pkg-${index}`));
  await collectGarbage();
  const rssLoaded = treeRss(process.pid);
  const call = (index) => host.call(`echo_${index % active}`, { text: 'hello' });
  // Every active package gets its worker, and its code warms.
  await runWindow({ total: active * 20, window: active, makeCall: call });
  await collectGarbage();
  const rssWarm = treeRss(process.pid);
  const { wallMs, latencies } = await runWindow({ total: callsPerHost, window, makeCall: call });
  const rssAfter = treeRss(process.pid);
  await host.close();
  return {
    callsPerSecond: (callsPerHost / wallMs) * 1000,
    latencies,
    rssLoadedMb: (rssLoaded - rssBefore) / 2 ** 20,
    rssWarmMb: rssWarm / 2 ** 20,
    perActiveMb: (rssWarm - rssLoaded) / active / 2 ** 20,
    rssAfterMb: rssAfter / 2 ** 20,
    mostWorkers: workers.most,
  };
}

const results = {};
for (const [isolation, sizes] of Object.entries(TIERS)) {
  const variants = {
    [`${sizes.active} of ${sizes.baseline} loaded`]: {
      isolation,
      loaded: sizes.baseline,
      active: sizes.active,
    },
    [`${sizes.active} of ${sizes.loaded} loaded`]: { isolation, loaded: sizes.loaded, active: sizes.active },
  };
  if (isolation !== 'process') {
    variants[`${sizes.active} of ${sizes.loaded} loaded, maxWorkers 16`] = {
      isolation,
      loaded: sizes.loaded,
      active: sizes.active,
      maxWorkers: 16,
    };
  }
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let cycle = 0; cycle < cycles; cycle += 1) {
    const names = Object.keys(variants);
    for (const name of cycle % 2 === 0 ? names : names.reverse()) {
      log(`many-packages ${isolation}: ${name} (cycle ${cycle + 1} of ${cycles})`);
      samples[name].push(await measureHost(variants[name]));
    }
  }
  results[isolation] = Object.fromEntries(
    Object.entries(samples).map(([name, runs]) => [
      name,
      {
        callsPerSecond: summarize(runs.map((run) => run.callsPerSecond)),
        latency: summarize(runs.flatMap((run) => run.latencies)),
        rssLoadedMb: summarize(runs.map((run) => run.rssLoadedMb)),
        rssWarmMb: summarize(runs.map((run) => run.rssWarmMb)),
        perActiveMb: summarize(runs.map((run) => run.perActiveMb)),
        mostWorkers: Math.max(...runs.map((run) => run.mostWorkers)),
      },
    ]),
  );
}
rmSync(root, { recursive: true, force: true });
report({ tiers: TIERS, callsPerHost, window, cycles, results });
