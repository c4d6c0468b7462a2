/**
 * The memory of the host and of its package processes, as the scenarios that compare tiers read
 * it: RSS and PSS from /proc (Linux), the host's ready spare told apart from packages' processes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { distUrl } from './library.mjs';
import { collectGarbage, sleep } from './stats.mjs';

const { descendantsOf } = await import(new URL('src/shared/process-tree.js', distUrl).href);

function kib(file, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(file, 'utf8'));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

/** Resident (RSS) and proportional (PSS) memory of the processes `pids`. */
export function memoryOf(pids) {
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    rss += kib(`/proc/${pid}/status`, 'VmRSS');
    pss += kib(`/proc/${pid}/smaps_rollup`, 'Pss');
  }
  return { rss, pss };
}

/**
 * The processes of the host's ready spare (bubblewrap's and its Node's): no package has taken it,
 * so its overlay (the folder bwrap binds read-only over the host's tmp root) still holds only the
 * mount point of its own tmp folder, where a taken one holds its package's mirrored snapshot.
 */
export function spareProcesses() {
  const spares = new Set();
  for (const pid of descendantsOf(process.pid)) {
    let args;
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!args[0]?.endsWith('bwrap') || spares.has(pid)) continue;
    const at = args.findIndex((arg, index) => args[index - 1] === '--ro-bind' && arg.endsWith('/overlay'));
    if (at === -1) continue;
    try {
      if (readdirSync(args[at]).length !== 1) continue;
    } catch {
      continue;
    }
    spares.add(pid);
    for (const below of descendantsOf(pid)) spares.add(below);
  }
  return spares;
}

/**
 * The spare a package's first call has the host start again, once it has started (its Node and its
 * prestarted worker): its PSS read until two readings a quarter second apart agree within 2%, for
 * at most 10 s. Its processes (only with a sandbox: without one there are no spares).
 */
export async function settledSpare() {
  let last = -1;
  for (let waited = 0; waited < 10_000; waited += 250) {
    const spare = spareProcesses();
    const { pss } = memoryOf(spare);
    if (spare.size > 1 && Math.abs(pss - last) <= 0.02 * pss) return spare;
    last = pss;
    await sleep(250);
  }
  return spareProcesses();
}

export async function settledHostRss() {
  await collectGarbage();
  await sleep(200);
  await collectGarbage();
  return process.memoryUsage.rss();
}
