/**
 * What package snapshots cost for a package that really depends on a large tree: a tool package
 * declaring this repository's own `dependencies`, with a copy of this repository's node_modules
 * (its dependency closure is ~8,500 files; the rest, devDependencies, is not copied):
 * `node bench/snapshot-cost.mjs` after `npm run build`.
 *
 * Each load is `host.load(pkg)` end to end (snapshot, then reading one tool's declaration in a
 * worker), against the same load of the same package without node_modules, in one run,
 * interleaved. "Empty store" gives each host a fresh `cacheDir`; "kept store" one that earlier
 * hosts filled.
 */
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolHost } from '../dist/src/index.js';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const REPO = fileURLToPath(new URL('..', import.meta.url));

const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
const ms = (value) => `${value.toFixed(0)} ms`;
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
const { dependencies } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));

async function writeTool(folder, label) {
  await mkdir(join(folder, 'tools'), { recursive: true });
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ name: 'big', type: 'module', toolhost: { tools: ['./tools/t.js'] }, dependencies }),
  );
  await writeFile(
    join(folder, 'tools', 't.js'),
    `export const name = 't';\nexport const description = ${JSON.stringify(label)};\nexport const parameterSchema = { type: 'object' };\nexport function run() { return 'ok'; }\n`,
  );
}

async function bytesUnder(folder) {
  let bytes = 0;
  const walk = async (path) => {
    const info = await lstat(path);
    bytes += info.blocks * 512;
    if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
  };
  await walk(folder).catch(() => {});
  return bytes;
}

const work = await mkdtemp(join(tmpdir(), 'toolhost-bench-snapshots-'));
try {
  const big = join(work, 'big');
  const small = join(work, 'small');
  await writeTool(big, 'v0');
  await writeTool(small, 'v0');
  await cp(join(REPO, 'node_modules'), join(big, 'node_modules'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  const kept = join(work, 'kept-store');

  const samples = {
    emptyBig: [],
    emptySmall: [],
    keptBig: [],
    unchanged: [],
    newVersion: [],
    close: [],
    store: [],
  };
  const load = async (folder, cacheDir, key, round) => {
    const tmp = join(work, `tmp-${key}-${round}`);
    await mkdir(tmp);
    const host = new ToolHost({ tempRoot: tmp, dataDir: join(work, 'data'), cacheDir, maxThreadsPerPool: 1 });
    const started = performance.now();
    const report = await host.load(folder);
    samples[key].push(performance.now() - started);
    if (report.modules[0]?.state !== 'offered') throw new Error(`not offered: ${JSON.stringify(report)}`);
    return { host, tmp };
  };
  const end = async ({ host, tmp }) => {
    const started = performance.now();
    await host.close();
    samples.close.push(performance.now() - started);
    await rm(tmp, { recursive: true, force: true });
  };
  // The kept store's first fill is not measured.
  await end(await load(big, kept, 'keptBig', 'warm-up'));
  samples.keptBig.length = 0;
  for (let round = 0; round < REPEATS; round++) {
    const fresh = join(work, `store-${round}`);
    await end(await load(big, fresh, 'emptyBig', round));
    samples.store.push(await bytesUnder(fresh));
    await rm(fresh, { recursive: true, force: true });
    await end(await load(small, join(work, `store-small-${round}`), 'emptySmall', round));
    const opened = await load(big, kept, 'keptBig', round);
    let started = performance.now();
    await opened.host.load(big);
    samples.unchanged.push(performance.now() - started);
    await writeTool(big, `v${round + 1}`);
    started = performance.now();
    await opened.host.load(big);
    samples.newVersion.push(performance.now() - started);
    await end(opened);
  }

  console.log(`${REPEATS} rounds, medians\n`);
  console.log('| step | median |');
  console.log('| --- | --- |');
  console.log(`| first load, package without node_modules | ${ms(median(samples.emptySmall))} |`);
  console.log(`| first load with the dependencies, empty store | ${ms(median(samples.emptyBig))} |`);
  console.log(`| first load with the dependencies, kept store | ${ms(median(samples.keptBig))} |`);
  console.log(`| load again, nothing changed (a scan) | ${ms(median(samples.unchanged))} |`);
  console.log(
    `| load after a tool file changed (new version, tree reused) | ${ms(median(samples.newVersion))} |`,
  );
  console.log(`| store filled by one load (disk) | ${mb(median(samples.store))} |`);
  console.log(`| close (ends workers, removes snapshots) | ${ms(median(samples.close))} |`);
} finally {
  await rm(work, { recursive: true, force: true });
}
