/**
 * 16. Where users wait on the second run: a package of 7 tool modules, each importing a real
 * library (zod, undici, ajv, piscina, p-retry, the Anthropic SDK, fast-check), with its
 * dependencies in its own node_modules (a copy of this repository's).
 *
 * - `toolhost list` with the store kept from an earlier run, against the same with the store's
 *   declarations removed before each run: what a second run cost before declarations were kept
 *   (every module read again in a throwaway worker), interleaved run by run.
 * - `toolhost call` of one tool of that package, against `toolhost call` of a package holding only
 *   that tool (same node_modules), both with their stores kept.
 *
 * The worker tier, named: the declarations kept are per tier, and the tier's own start is not
 * what this measures. Each run is a fresh process. The 7-module package's dependency closure
 * (6,811 entries) is kept in the store after the first run (src/snapshot/kept-trees.ts); the
 * one-tool package's is small enough to be linked per run.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { distUrl } from '../lib/library.mjs';
import { summarize } from '../lib/stats.mjs';
import { LIBRARIES, settle, writePackage } from './repeat-runs-packages.mjs';

const cli = fileURLToPath(new URL('src/cli/main.js', distUrl));
const rounds = iterations(7, 3);
const work = await mkdtemp(join(tmpdir(), 'toolhost-bench-repeat-'));

/** One CLI run, a fresh process; ms from start to exit. */
function run(args, cacheDir) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, ...args], {
      env: { PATH: process.env.PATH ?? '', TMPDIR: join(work, 'tmp'), TOOLHOST_CACHE_DIR: cacheDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('exit', (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`toolhost ${args[0]} exited with ${code}: ${output}`));
    });
  });
}

try {
  await mkdir(join(work, 'tmp'));
  const seven = join(work, 'seven');
  const one = join(work, 'one');
  await writePackage(seven, Object.keys(LIBRARIES));
  await writePackage(one, ['zod_check']);
  await settle();
  const stores = { seven: join(work, 'store-seven'), one: join(work, 'store-one') };
  const list = (store) => run(['list', '--isolation', 'worker', seven], store);
  const call = (pkg, store) =>
    run(['call', '--isolation', 'worker', pkg, 'zod_check', '{"text":"hi"}'], store);
  log(`repeat-runs: a ${Object.keys(LIBRARIES).length}-module package, ${rounds} rounds`);

  // The kept stores get their first run before anything is measured.
  await list(stores.seven);
  await call(one, stores.one);
  const samples = { listKept: [], listReadAgain: [], callSeven: [], callOne: [] };
  for (let round = 0; round < rounds; round++) {
    samples.listKept.push(await list(stores.seven));
    await rm(join(stores.seven, 'declarations'), { recursive: true, force: true });
    samples.listReadAgain.push(await list(stores.seven));
    samples.callSeven.push(await call(seven, stores.seven));
    samples.callOne.push(await call(one, stores.one));
  }
  report({
    modules: Object.keys(LIBRARIES).length,
    rounds,
    stats: Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, summarize(values)])),
  });
} finally {
  await rm(work, { recursive: true, force: true });
}
