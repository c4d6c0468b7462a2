/**
 * 13. The peer: isolated-vm 7, a V8 isolate driven from the host's own thread, against host.call
 * (a pooled worker thread) and a raw piscina run, one call at a time, interleaved call by call. Each
 * isolated-vm call gets a timeout, as a host of untrusted code would give it, and copies its
 * arguments and its result in and out of the isolate. isolated-vm ships binaries for Node 24 and 26
 * only: on other lines (or where it is not installed) the scenario is skipped and says why.
 */

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, importToolhost, quietLogger } from '../lib/library.mjs';
import { rawPiscina } from '../lib/raw-piscina.mjs';
import { interleave, summarize } from '../lib/stats.mjs';

/** Its own folder first (`npm install --prefix bench/peer` under Node 24), then the repository's. */
function loadIsolatedVm() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24)
    return {
      skipped: `isolated-vm 7 needs Node 24 or later (its binaries cover 24 and 26); this is Node ${process.versions.node}`,
    };
  try {
    return { ivm: createRequire(new URL('../peer/package.json', import.meta.url))('isolated-vm') };
  } catch (error) {
    return {
      skipped: `isolated-vm could not be loaded on Node ${process.versions.node}: ${String(error.message).split('\n')[0]} (npm install --prefix bench/peer installs it)`,
    };
  }
}

const loaded = loadIsolatedVm();
if (loaded.skipped !== undefined) {
  log(`peer: skipped, ${loaded.skipped}`);
  report({ skipped: loaded.skipped });
  process.exit(0);
}
const { ivm } = loaded;
const { ToolHost } = await importToolhost();
const threads = availableParallelism();
const args = { text: 'hello' };
const TIMEOUT_MS = 30_000;

const host = new ToolHost({ logger: quietLogger() });
await host.load(fileURLToPath(benchToolsDir));
const raw = rawPiscina(threads);

// The same echo inside an isolate with a heap bound, as a tool host would make one per package.
const isolate = new ivm.Isolate({ memoryLimit: 64 });
const context = await isolate.createContext();
await (await isolate.compileScript('globalThis.run = (args) => args.text;')).run(context);
const run = await context.global.get('run', { reference: true });
const callOptions = { arguments: { copy: true }, result: { copy: true }, timeout: TIMEOUT_MS };

const variants = {
  rawPiscina: () => raw.run({ tool: 'echo', args }),
  hostCall: () => host.call('echo', args),
  isolatedVmSync: async () => run.applySync(undefined, [args], callOptions),
  isolatedVm: () => run.apply(undefined, [args], callOptions),
};
await Promise.all(Array.from({ length: threads * 4 }, () => host.call('echo', args)));
await Promise.all(Array.from({ length: threads * 4 }, () => raw.run({ tool: 'echo', args })));
for (const [name, call] of Object.entries(variants)) {
  const value = await call();
  const text = typeof value === 'string' ? value : value?.content?.[0]?.text;
  if (text !== 'hello') throw new Error(`${name} answered ${JSON.stringify(value)}`);
}

const cycles = iterations(4000, 800);
log(
  `peer: ${cycles} cycles, isolated-vm ${createRequire(new URL('../peer/package.json', import.meta.url))('isolated-vm/package.json').version}`,
);
const samples = await interleave({ variants, cycles, warmupCycles: iterations(300, 100) });
isolate.dispose();
await host.close();
await raw.destroy();

// What isolated-vm does not contain: a script that grows one object's properties until its isolate
// is out of memory, in a process of its own standing for the host.
const peerPath = fileURLToPath(new URL('../peer/package.json', import.meta.url));
const oomScript = `
const ivm = require('module').createRequire(${JSON.stringify(peerPath)})('isolated-vm');
const isolate = new ivm.Isolate({ memoryLimit: 16 });
const context = isolate.createContextSync();
try {
  isolate.compileScriptSync('const o = {}; for (let i = 0; ; i++) o["k" + i] = i;').runSync(context, { timeout: 60000 });
} catch (error) {
  console.log('caught: ' + error.message);
}
console.log('host alive');`;
const outOfMemory = await new Promise((resolve) => {
  const child = spawn(process.execPath, ['-e', oomScript], { stdio: ['ignore', 'pipe', 'ignore'] });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.once('exit', (code, signal) =>
    resolve({
      code,
      signal,
      survived: output.includes('host alive'),
      said: output.trim().split('\n')[0] ?? '',
    }),
  );
});
// The same script as a tool, in a worker with a 16 MB heap.
const bounded = new ToolHost({ logger: quietLogger(), callHeapMb: 16 });
await bounded.load(fileURLToPath(new URL('../fixtures/dict-oom.js', import.meta.url)));
const toolOutOfMemory = (await bounded.call('dict_oom', {})).error?.code ?? 'no error';
await bounded.close();
outOfMemory.toolhost = toolOutOfMemory;
log(
  `peer: an isolate out of memory: ${outOfMemory.survived ? 'the host lived' : `the host ended (${outOfMemory.signal ?? `exit ${outOfMemory.code}`})`}`,
);

report({
  outOfMemory,
  node: process.versions.node,
  isolatedVm: createRequire(new URL('../peer/package.json', import.meta.url))('isolated-vm/package.json')
    .version,
  threads,
  cycles,
  stats: Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)])),
});
