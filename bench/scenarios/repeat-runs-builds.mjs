/**
 * Section 16's runs with this build and another one, interleaved run by run in one process, so a
 * change to what a second run costs is measured before and after on the same loaded machine:
 *
 *   node bench/scenarios/repeat-runs-builds.mjs <other dist/> [rounds]
 *
 * The other build is a folder laid out like dist/ with its packages resolvable (an earlier commit:
 * `git archive <commit> | tar -x -C /tmp/before`, a link to this node_modules, `npm run build`).
 * The same two packages as repeat-runs.mjs (a 7-module package with real libraries, and its zod
 * tool alone), each build with stores of its own; prints each run's median and the ratios. Not
 * one of run.js's scenarios: it needs the other build.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LIBRARIES, settle, writePackage } from './repeat-runs-packages.mjs';

const other = process.argv[2];
if (other === undefined) {
  process.stderr.write(
    'Usage: node bench/scenarios/repeat-runs-builds.mjs <folder laid out like dist/> [rounds]\n',
  );
  process.exit(2);
}
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const builds = {
  before: join(resolve(other), 'src/cli/main.js'),
  after: join(REPO, 'dist/src/cli/main.js'),
};
const rounds = Number(process.argv[3] ?? 5);
const work = await mkdtemp(join(tmpdir(), 'toolhost-bench-repeat-builds-'));

/** One CLI run, a fresh process; ms from start to exit. */
function run(cli, args, store) {
  return new Promise((resolveRun, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, ...args], {
      env: { PATH: process.env.PATH ?? '', TMPDIR: join(work, 'tmp'), TOOLHOST_CACHE_DIR: store },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (chunk) => {
      errors += chunk;
    });
    child.once('exit', (code) =>
      code === 0
        ? resolveRun(performance.now() - started)
        : reject(new Error(`${cli} ${args[0]}: ${errors}`)),
    );
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

try {
  await mkdir(join(work, 'tmp'));
  const packages = { seven: join(work, 'seven'), one: join(work, 'one') };
  await writePackage(packages.seven, Object.keys(LIBRARIES));
  await writePackage(packages.one, ['zod_check']);
  await settle();
  const list = (build) =>
    run(builds[build], ['list', '--isolation', 'worker', packages.seven], join(work, `${build}-seven`));
  const call = (build, pkg) =>
    run(
      builds[build],
      ['call', '--isolation', 'worker', packages[pkg], 'zod_check', '{"text":"hi"}'],
      join(work, `${build}-${pkg}`),
    );
  for (const build of Object.keys(builds)) {
    await list(build);
    await call(build, 'one');
  }
  const samples = {};
  const add = (key, value) => {
    samples[key] ??= [];
    samples[key].push(value);
  };
  for (let round = 0; round < rounds; round++) {
    for (const build of Object.keys(builds)) {
      add(`${build} list, declarations kept`, await list(build));
      await rm(join(work, `${build}-seven`, 'declarations'), { recursive: true, force: true });
      add(`${build} list, every module read again`, await list(build));
      add(`${build} call, 7-module package`, await call(build, 'seven'));
      add(`${build} call, one-tool package`, await call(build, 'one'));
    }
  }
  const medians = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, median(values)]));
  for (const [key, value] of Object.entries(medians))
    process.stdout.write(`${key.padEnd(42)} ${value.toFixed(0)} ms\n`);
  for (const build of Object.keys(builds)) {
    const of = (run) => medians[`${build} ${run}`];
    process.stdout.write(
      `${build}: list kept / read again ${(of('list, declarations kept') / of('list, every module read again')).toFixed(2)}×, call 7-module / one-tool ${(of('call, 7-module package') / of('call, one-tool package')).toFixed(2)}×\n`,
    );
  }
  process.stdout.write(
    `after's list kept / before's read again ${(medians['after list, declarations kept'] / medians['before list, every module read again']).toFixed(2)}×\n`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
