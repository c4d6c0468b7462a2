/**
 * What package snapshots cost, for a package with a sizeable node_modules (a copy of this repo's
 * own: ~200 MB, ~6,000 files): `node bench/snapshot-cost.mjs` after `npm run build`.
 *
 * Each load below is `host.load(pkg)` end to end (snapshot, then reading one tool's declaration in
 * a worker), against the same load of the same package without node_modules, in one run,
 * interleaved. Disk is what a snapshot allocates beyond the package itself: hard links to installed
 * files cost a directory entry, not their size.
 */
import { cp, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolHost } from '../dist/src/index.js';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const NODE_MODULES = fileURLToPath(new URL('../node_modules', import.meta.url));

const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
const ms = (value) => `${value.toFixed(0)} ms`;
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

async function writeTool(folder, label) {
  await mkdir(join(folder, 'tools'), { recursive: true });
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ name: 'big', type: 'module', toolhost: { tools: ['./tools/t.js'] } }),
  );
  await writeFile(
    join(folder, 'tools', 't.js'),
    `export const name = 't';\nexport const description = ${JSON.stringify(label)};\nexport const parameterSchema = { type: 'object' };\nexport function run() { return 'ok'; }\n`,
  );
}

/** Bytes allocated under `folder` by inodes that `known` (the package's own) does not hold. */
async function allocatedBeyond(folder, known) {
  let bytes = 0;
  const walk = async (path) => {
    const info = await lstat(path);
    if (!known.has(info.ino)) bytes += info.blocks * 512;
    if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
  };
  await walk(folder).catch(() => {});
  return bytes;
}

async function inodes(folder) {
  const seen = new Set();
  const walk = async (path) => {
    const info = await lstat(path);
    seen.add(info.ino);
    if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
  };
  await walk(folder);
  return seen;
}

/** The snapshot folders a host made under `tmp`: its dependency tree and its version folders. */
async function snapshotFolders(tmp) {
  const [hostFolder] = await readdir(tmp);
  const snapshots = join(tmp, hostFolder, 'snapshots');
  const domain = (await readdir(snapshots)).find((name) => name !== 'files');
  const [treeName] = await readdir(join(snapshots, domain));
  const tree = join(snapshots, domain, treeName);
  const versions = (await readdir(tree))
    .filter((name) => name.startsWith('v-'))
    .sort((a, b) => {
      const n = (name) => Number(name.slice(name.lastIndexOf('-') + 1));
      return n(a) - n(b);
    });
  return { tree: join(tree, 'node_modules'), versions: versions.map((name) => join(tree, name)) };
}

async function count(folder) {
  let files = 0;
  const walk = async (path) => {
    const info = await lstat(path);
    if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
    else files += 1;
  };
  await walk(folder);
  return files;
}

const work = await mkdtemp(join(tmpdir(), 'toolhost-bench-snapshots-'));
try {
  const big = join(work, 'big');
  const small = join(work, 'small');
  await writeTool(big, 'v0');
  await writeTool(small, 'v0');
  await cp(NODE_MODULES, join(big, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  const files = await count(join(big, 'node_modules'));
  const packageInodes = await inodes(big);

  const samples = {
    firstBig: [],
    firstSmall: [],
    unchanged: [],
    newVersion: [],
    tree: [],
    disk: [],
    close: [],
  };
  for (let round = 0; round < REPEATS; round++) {
    for (const [folder, key] of [
      [big, 'firstBig'],
      [small, 'firstSmall'],
    ]) {
      const tmp = join(work, `tmp-${key}-${round}`);
      await mkdir(tmp);
      const host = new ToolHost({ tmpDir: tmp, dataDir: join(work, 'data'), maxThreadsPerPool: 1 });
      let started = performance.now();
      const report = await host.load(folder);
      samples[key].push(performance.now() - started);
      if (report.modules[0]?.state !== 'offered') throw new Error(`not offered: ${JSON.stringify(report)}`);
      if (folder === big) {
        started = performance.now();
        await host.load(folder);
        samples.unchanged.push(performance.now() - started);
        await writeTool(folder, `v${round + 1}`);
        started = performance.now();
        await host.load(folder);
        samples.newVersion.push(performance.now() - started);
        const { tree, versions } = await snapshotFolders(tmp);
        samples.tree.push(await allocatedBeyond(tree, packageInodes));
        const latest = versions.at(-1);
        samples.disk.push(await allocatedBeyond(latest, await inodes(big)));
      }
      started = performance.now();
      await host.close();
      samples.close.push(performance.now() - started);
      await rm(tmp, { recursive: true, force: true });
    }
  }

  console.log(`node_modules: ${files} files (a copy of this repo's), ${REPEATS} rounds, medians\n`);
  console.log('| step | median |');
  console.log('| --- | --- |');
  console.log(
    `| first load, package without node_modules (the read alone) | ${ms(median(samples.firstSmall))} |`,
  );
  console.log(
    `| first load, package with the node_modules (tree linked) | ${ms(median(samples.firstBig))} |`,
  );
  console.log(`| load again, nothing changed (a scan) | ${ms(median(samples.unchanged))} |`);
  console.log(
    `| load after a tool file changed (new version, tree reused) | ${ms(median(samples.newVersion))} |`,
  );
  console.log(
    `| disk of the linked node_modules tree, once per state of node_modules | ${mb(median(samples.tree))} |`,
  );
  console.log(`| disk per version (own files copied, directories) | ${mb(median(samples.disk))} |`);
  console.log(`| close (ends workers, removes snapshots) | ${ms(median(samples.close))} |`);
} finally {
  await rm(work, { recursive: true, force: true });
}
