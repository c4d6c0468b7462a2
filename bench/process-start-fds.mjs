/**
 * A process-tier package's first call without a sandbox, in a host that holds many descriptors (a
 * server's sockets), against a build before a change: `PATH= "$(command -v node)"
 * bench/process-start-fds.mjs <folder laid out like dist/> [<another>]` after `npm run build` (an
 * empty PATH hides bubblewrap; the second folder defaults to this build's dist/). The host opens
 * BENCH_FDS descriptors (default 5000) first; each round loads the bench tools in a fresh host of
 * each build, in turns, and times its first call (a package process started for it), and the
 * longest stall of the host's event loop meanwhile (`monitorEventLoopDelay`, 1 ms resolution).
 * Medians of BENCH_ROUNDS rounds (default 6).
 */
import { openSync } from 'node:fs';
import { resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { summarize } from './lib/stats.mjs';

const folders = process.argv.slice(2);
if (folders.length === 0) {
  process.stderr.write(
    'Usage: PATH= "$(command -v node)" bench/process-start-fds.mjs <dist folder> [<dist folder>]\n',
  );
  process.exit(2);
}
if (folders.length === 1) folders.push(fileURLToPath(new URL('../dist/', import.meta.url)));
const FDS = Number(process.env.BENCH_FDS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const tools = fileURLToPath(new URL('./fixtures/bench-tools/', import.meta.url));
const logger = { info() {}, warn() {}, error() {} };

for (let opened = 0; opened < FDS; opened += 1) openSync('/dev/null', 'r');
const builds = [];
for (const folder of folders) {
  const { ToolHost } = await import(pathToFileURL(`${resolve(folder)}/src/index.js`).href);
  builds.push({ folder, ToolHost, firstCallMs: [], stallMs: [] });
}

for (let round = 0; round < ROUNDS; round += 1) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const build of order) {
    const host = new build.ToolHost({ logger, isolation: 'process' });
    try {
      await host.load(tools);
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const started = performance.now();
      const outcome = await host.call('echo', { text: 'x' });
      build.firstCallMs.push(performance.now() - started);
      delay.disable();
      build.stallMs.push(delay.max / 1e6);
      if (outcome.isError) throw new Error(`the call failed: ${JSON.stringify(outcome)}`);
    } finally {
      await host.close();
    }
  }
}

console.log(`${FDS} descriptors open in the host, ${ROUNDS} rounds, medians`);
console.log('| Build | First call | Longest event-loop stall |');
console.log('| --- | --- | --- |');
for (const build of builds) {
  const call = summarize(build.firstCallMs).median.toFixed(1);
  const stall = summarize(build.stallMs).median.toFixed(1);
  console.log(`| ${build.folder} | ${call} ms | ${stall} ms |`);
}
