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
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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

const LIBRARIES = {
  zod_check: ['zod', `import { z } from 'zod'; const check = z.object({ text: z.string() });`],
  undici_agent: ['undici', `import { Agent } from 'undici'; void Agent;`],
  ajv_compile: ['ajv', `import Ajv from 'ajv'; void Ajv;`],
  piscina_pool: ['piscina', `import { Piscina } from 'piscina'; void Piscina;`],
  retry_once: ['p-retry', `import pRetry from 'p-retry'; void pRetry;`],
  anthropic_client: ['@anthropic-ai/sdk', `import Anthropic from '@anthropic-ai/sdk'; void Anthropic;`],
  property_sample: ['fast-check', `import fc from 'fast-check'; void fc;`],
};

async function writePackage(folder, names) {
  await mkdir(join(folder, 'tools'), { recursive: true });
  const manifest = {
    name: `repeat-${names.length}`,
    type: 'module',
    private: true,
    dependencies: Object.fromEntries(names.map((name) => [LIBRARIES[name][0], '*'])),
    toolhost: { tools: names.map((name) => `./tools/${name}.js`) },
  };
  await writeFile(join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const name of names)
    await writeFile(
      join(folder, 'tools', `${name}.js`),
      `${LIBRARIES[name][1]}
export const name = ${JSON.stringify(name)};
export const description = 'Echoes its text (after importing a real library)';
export const parameterSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
export function run({ text }) { return text; }
`,
    );
  await cp(join(REPO, 'node_modules'), join(folder, 'node_modules'), {
    recursive: true,
    verbatimSymlinks: true,
  });
}

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
  // Installed files are known by their identity once left alone for two seconds (package-scan.ts).
  await new Promise((resolveWait) => setTimeout(resolveWait, 2100));
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
