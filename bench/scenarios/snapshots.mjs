/**
 * 12. What snapshots cost where users wait: `toolhost list` of a small tool package whose
 * node_modules holds its devDependencies (toolhost and TypeScript, with toolhost's own dependencies:
 * a copy of this repository's node_modules, about 10,000 files), against `toolhost list` of the same
 * package without node_modules, each a fresh process, interleaved run by run. "First run" starts
 * every run with an empty store (TOOLHOST_CACHE_DIR); "second run" keeps one store across runs.
 * The first run again under `--isolation strict`, whose check for symbolic links leading out of the
 * package reads only what the snapshot lists.
 *
 * `toolhost serve` of the same two packages, until its `initialize` answer and then its `tools/list`
 * answer arrive over stdio (a fresh store each run, as a new user's first serve).
 *
 * Then the ways a dependency tree can be made, on this machine's file system, for the same set of
 * installed files (toolhost's own dependency closure): copying each file, a reflink
 * (`fs.copyFile` with COPYFILE_FICLONE_FORCE, where the file system has them), and the store
 * (first: hashed and copied into it, then linked; again: linked from it by its record).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { copyFile, cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { distUrl } from '../lib/library.mjs';
import { summarize } from '../lib/stats.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const cli = fileURLToPath(new URL('src/cli/main.js', distUrl));
const rounds = iterations(7, 3);
const work = await mkdtemp(join(tmpdir(), 'toolhost-bench-snapshots-'));

const TOOL = `export const name = 'count_words';
export const description = 'Counts the words in a text';
export const parameterSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
export function run({ text }) { return String(text.split(/\\s+/).filter(Boolean).length); }
`;

async function writePackage(folder) {
  await mkdir(join(folder, 'tools'), { recursive: true });
  const manifest = {
    name: 'fresh-tools',
    type: 'module',
    private: true,
    toolhost: { tools: ['./tools/count-words.js'] },
    devDependencies: { toolhost: '^0.1.0', typescript: '^5.9.3' },
  };
  await writeFile(join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(folder, 'tools', 'count-words.js'), TOOL);
}

async function countFiles(folder) {
  let files = 0;
  const walk = async (path) => {
    const info = await lstat(path);
    if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
    else files += 1;
  };
  await walk(folder);
  return files;
}

function list(pkg, cacheDir, isolation = 'worker') {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, 'list', '--isolation', isolation, pkg], {
      env: { PATH: process.env.PATH ?? '', TMPDIR: join(work, 'tmp'), TOOLHOST_CACHE_DIR: cacheDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('exit', (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`toolhost list exited with ${code}: ${stderr}`));
    });
  });
}

/** `toolhost serve pkg` over stdio: ms until `initialize` is answered, and until `tools/list` is. */
function serve(pkg, cacheDir) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, 'serve', pkg], {
      env: { PATH: process.env.PATH ?? '', TMPDIR: join(work, 'tmp'), TOOLHOST_CACHE_DIR: cacheDir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    let stdout = '';
    let stderr = '';
    let initialized;
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      for (let end = stdout.indexOf('\n'); end !== -1; end = stdout.indexOf('\n')) {
        const message = JSON.parse(stdout.slice(0, end));
        stdout = stdout.slice(end + 1);
        if (message.id === 1) {
          initialized = performance.now() - started;
          send({ method: 'notifications/initialized' });
          send({ id: 2, method: 'tools/list' });
        } else if (message.id === 2) {
          const listed = performance.now() - started;
          if (message.result?.tools?.length !== 1)
            reject(new Error(`tools/list answered ${JSON.stringify(message)}`));
          child.stdin.end();
          child.once('exit', () => resolve({ initialized, listed }));
        }
      }
    });
    child.once('exit', (code) => {
      if (initialized === undefined) reject(new Error(`toolhost serve exited with ${code}: ${stderr}`));
    });
    send({
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    });
  });
}

/** The files of toolhost's own dependency closure, as a snapshot would copy them. */
async function closureFiles() {
  const { listDependencyClosure } = await import(new URL('src/snapshot/dependency-closure.js', distUrl).href);
  const closure = await listDependencyClosure(REPO, new AbortController().signal);
  return {
    base: closure.base,
    dirs: closure.entries.filter((entry) => entry.type === 'dir').map((entry) => entry.rel),
    files: closure.entries.filter((entry) => entry.type === 'file').map((entry) => entry.rel),
  };
}

async function makeTree(closure, destination, placeFile) {
  await mkdir(destination, { recursive: true });
  for (const dir of closure.dirs) await mkdir(join(destination, dir), { recursive: true });
  let next = 0;
  const lane = async () => {
    while (next < closure.files.length) {
      const rel = closure.files[next++];
      await placeFile(join(closure.base, rel), join(destination, rel), rel);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: 16 }, lane));
  return performance.now() - started;
}

try {
  await mkdir(join(work, 'tmp'));
  const big = join(work, 'big');
  const small = join(work, 'small');
  await writePackage(big);
  await writePackage(small);
  await cp(join(REPO, 'node_modules'), join(big, 'node_modules'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  await mkdir(join(big, 'node_modules', 'toolhost'), { recursive: true });
  await cp(join(REPO, 'package.json'), join(big, 'node_modules', 'toolhost', 'package.json'));
  await cp(fileURLToPath(distUrl), join(big, 'node_modules', 'toolhost', 'dist'), { recursive: true });
  const files = await countFiles(join(big, 'node_modules'));
  log(`snapshots: node_modules of ${files} files, ${rounds} rounds`);

  const samples = {
    firstBig: [],
    firstSmall: [],
    secondBig: [],
    secondSmall: [],
    strictBig: [],
    strictSmall: [],
  };
  const kept = { big: join(work, 'cache-big'), small: join(work, 'cache-small') };
  // The kept stores get their first run before anything is measured.
  await list(big, kept.big);
  await list(small, kept.small);
  for (let round = 0; round < rounds; round++) {
    const fresh = (name) => join(work, `cache-${name}-${round}`);
    samples.firstBig.push(await list(big, fresh('big')));
    samples.firstSmall.push(await list(small, fresh('small')));
    samples.secondBig.push(await list(big, kept.big));
    samples.secondSmall.push(await list(small, kept.small));
    samples.strictBig.push(await list(big, fresh('strict-big'), 'strict'));
    samples.strictSmall.push(await list(small, fresh('strict-small'), 'strict'));
  }

  const served = { big: [], small: [] };
  for (let round = 0; round < rounds; round++) {
    served.big.push(await serve(big, join(work, `serve-big-${round}`)));
    served.small.push(await serve(small, join(work, `serve-small-${round}`)));
  }
  const serveStats = (runs) => ({
    initialized: summarize(runs.map((run) => run.initialized)),
    listed: summarize(runs.map((run) => run.listed)),
  });

  // The ways to make a dependency tree, interleaved round by round.
  const closure = await closureFiles();
  const methods = { copy: [], reflink: [], storeFirst: [], storeAgain: [] };
  let reflinks = 'yes';
  const probe = join(work, 'reflink-probe');
  await copyFile(join(REPO, 'package.json'), probe, constants.COPYFILE_FICLONE_FORCE).catch((error) => {
    reflinks = `no (${error.code})`;
  });
  const { FileStore } = await import(new URL('src/snapshot/file-store.js', distUrl).href);
  const signal = new AbortController().signal;
  for (let round = 0; round < rounds; round++) {
    const tree = (name) => join(work, `tree-${name}-${round}`);
    methods.copy.push(await makeTree(closure, tree('copy'), (from, to) => copyFile(from, to)));
    if (reflinks === 'yes')
      methods.reflink.push(
        await makeTree(closure, tree('reflink'), (from, to) =>
          copyFile(from, to, constants.COPYFILE_FICLONE_FORCE),
        ),
      );
    const store = new FileStore(join(work, `store-${round}`));
    const record = {};
    methods.storeFirst.push(
      await makeTree(closure, tree('store-first'), async (from, to, rel) => {
        record[rel] = await store.place(from, signal);
        await store.linkTo(record[rel], to);
      }),
    );
    methods.storeAgain.push(
      await makeTree(closure, tree('store-again'), (_from, to, rel) => store.linkTo(record[rel], to)),
    );
    for (const name of ['copy', 'reflink', 'store-first', 'store-again'])
      await rm(tree(name), { recursive: true, force: true });
  }
  const closureBytes = (
    await Promise.all(
      closure.files.map((rel) => readFile(join(closure.base, rel)).then((bytes) => bytes.length)),
    )
  ).reduce((sum, bytes) => sum + bytes, 0);

  report({
    files,
    rounds,
    stats: Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, summarize(values)])),
    serve: { big: serveStats(served.big), small: serveStats(served.small) },
    methods: {
      files: closure.files.length,
      bytes: closureBytes,
      reflinks,
      stats: Object.fromEntries(
        Object.entries(methods)
          .filter(([, values]) => values.length > 0)
          .map(([key, values]) => [key, summarize(values)]),
      ),
    },
  });
} finally {
  await rm(work, { recursive: true, force: true });
}
