/**
 * Choosing the strict tier (for the host, or per package) and the permission flags it gives workers.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { workerExecArgv } from '../dist/src/calls/isolation.js';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource, writePackage } from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const DIST_SRC = fileURLToPath(new URL('../dist/src', import.meta.url));
const DIST_WORKERS = fileURLToPath(new URL('../dist/workers', import.meta.url));
const PISCINA_DIST = dirname(createRequire(import.meta.url).resolve('piscina'));
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';
/** Every tested Node line has require(esm) on by default; workers start with it off. */
const NO_REQUIRE_ESM = '--no-experimental-require-module';
/** Node 25 added the network to the permission model. */
const NODE_DENIES_NETWORK = process.allowedNodeEnvironmentFlags.has('--allow-net');
const QUIET = process.allowedNodeEnvironmentFlags.has('--disable-warning')
  ? ['--disable-warning=ExperimentalWarning']
  : [];

let root: string;
let host: ToolHost | undefined;

beforeEach(async () => {
  root = await tempDir('toolhost-strict-options-');
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  await removeDir(root);
});

function startWorker(execArgv: string[]): Promise<unknown> {
  const worker = new Worker("require('node:worker_threads').parentPort.postMessage('started')", {
    eval: true,
    execArgv,
    env: {},
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (message) => void worker.terminate().then(() => resolve(message)));
    worker.once('error', reject);
  });
}

describe('the isolation option', () => {
  it("accepts 'worker', 'strict' and 'process' and names them all when it gets anything else", () => {
    host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'strict' });
    expect(() => new ToolHost({ isolation: 'sandbox' as never })).toThrow(
      `Expected \`isolation\` to be one of 'worker', 'strict', 'process', got "sandbox"`,
    );
  });

  it("a package loaded with isolation: strict is strict while the host's own tier stays worker", async () => {
    host = new ToolHost({ isolation: 'worker', dataDir: join(root, 'data'), logger: recordingLogger() });
    const plain = await writePackage(join(root, 'plain'), {
      'writes.js': toolSource(
        'plain_write',
        "(await import('node:fs')).writeFileSync(args.path, 'from the worker tier'), 'written'",
      ).replace('export function run', 'export async function run'),
    });
    await host.load(plain);
    await host.load(HOSTILE, { isolation: 'strict' });
    const outside = join(root, 'outside.txt');

    const strict = await host.call('strict_write_file', { path: outside, text: 'from strict' });
    expect(strict.error).toMatchObject({
      code: 'TOOL_ACCESS_DENIED',
      message: `the strict isolation tier refused FileSystemWrite on ${outside}`,
    });
    expect(existsSync(outside)).toBe(false);

    const worker = await host.call('plain_write', { path: outside });
    expect(outcomeText(worker)).toBe('written');
    expect(existsSync(outside)).toBe(true);
  });

  it('loading a package again with isolation: strict replaces the workers it had in the worker tier', async () => {
    host = new ToolHost({ isolation: 'worker', dataDir: join(root, 'data'), logger: recordingLogger() });
    const outside = join(root, 'outside.txt');
    await host.load(HOSTILE);
    expect(outcomeText(await host.call('strict_write_file', { path: outside, text: 'worker tier' }))).toBe(
      'written',
    );

    await host.load(HOSTILE, { isolation: 'strict' });
    const again = join(root, 'outside-again.txt');
    const outcome = await host.call('strict_write_file', { path: again, text: 'strict' });
    expect(outcome.error).toMatchObject({
      code: 'TOOL_ACCESS_DENIED',
      message: `the strict isolation tier refused FileSystemWrite on ${again}`,
    });
    expect(existsSync(again)).toBe(false);
  });
});

describe('workerExecArgv', () => {
  it('the worker tier only turns addons and require(esm) off', () => {
    const paths = { domain: HOSTILE, tmpDir: join(root, 'tmp') };
    expect(workerExecArgv('worker', paths, { allowAddons: false })).toEqual([NO_REQUIRE_ESM, '--no-addons']);
    expect(workerExecArgv('worker', paths, { allowAddons: true })).toEqual([NO_REQUIRE_ESM]);
  });

  it('strict grants reads of the snapshot (not the package folder), its tmp folder and the worker code, and writes of the tmp folder only', () => {
    const tmpDir = join(root, 'tmp');
    const snapshot = join(root, 'snapshots', 'nm-1');
    expect(workerExecArgv('strict', { domain: HOSTILE, snapshot, tmpDir }, { allowAddons: false })).toEqual([
      NO_REQUIRE_ESM,
      PERMISSION_FLAG,
      `--allow-fs-read=${snapshot}`,
      `--allow-fs-read=${tmpDir}/*`,
      `--allow-fs-read=${DIST_SRC}`,
      `--allow-fs-read=${DIST_WORKERS}`,
      `--allow-fs-read=${PISCINA_DIST}`,
      `--allow-fs-write=${tmpDir}/*`,
      '--no-addons',
      `--require=${join(DIST_WORKERS, 'guard', 'strict-preload.cjs')}`,
      ...QUIET,
    ]);
    expect(workerExecArgv('strict', { domain: HOSTILE, snapshot, tmpDir }, { allowAddons: true })).toContain(
      '--allow-addons',
    );
  });

  it('strict on Node 25 and later gives the network only when asked to', ({ skip }) => {
    skip(!NODE_DENIES_NETWORK, `Node ${process.version} has no --allow-net (Node 25 and later have)`);
    const paths = { domain: HOSTILE, tmpDir: join(root, 'tmp') };
    expect(workerExecArgv('strict', paths, { allowAddons: false })).not.toContain('--allow-net');
    expect(workerExecArgv('strict', paths, { allowAddons: false, allowNetwork: true })).toContain(
      '--allow-net',
    );
    expect(workerExecArgv('worker', paths, { allowAddons: false, allowNetwork: true })).toEqual([
      NO_REQUIRE_ESM,
      '--no-addons',
    ]);
  });

  it('strict before Node 25 never passes --allow-net (a worker would refuse to start with it)', async ({
    skip,
  }) => {
    skip(NODE_DENIES_NETWORK, `Node ${process.version} knows --allow-net`);
    const execArgv = workerExecArgv(
      'strict',
      { domain: HOSTILE, tmpDir: join(root, 'tmp') },
      { allowAddons: false, allowNetwork: true },
    );
    expect(execArgv).not.toContain('--allow-net');
    await expect(startWorker(execArgv)).resolves.toBe('started');
  });

  it('a grant is never repeated, however it is written (Node 20 aborts the whole process on a repeat)', async () => {
    const execArgv = workerExecArgv(
      'strict',
      { domain: HOSTILE, snapshot: `${DIST_SRC}/`, tmpDir: join(DIST_SRC, 'tmp') },
      { allowAddons: false },
    );
    expect(execArgv.filter((flag) => flag.startsWith('--allow-fs-read='))).toEqual([
      `--allow-fs-read=${DIST_SRC}`,
      `--allow-fs-read=${DIST_WORKERS}`,
      `--allow-fs-read=${PISCINA_DIST}`,
    ]);
    // Were a grant repeated, Node would abort this test process here.
    await expect(startWorker(execArgv)).resolves.toBe('started');
  });

  it('a path with a wildcard or a comma in it is refused rather than widened', () => {
    const paths = (snapshot: string) => ({ domain: HOSTILE, snapshot, tmpDir: join(root, 'tmp') });
    expect(() => workerExecArgv('strict', paths('/srv/tools/*'), { allowAddons: false })).toThrow(
      'Expected no `*` or `,` in a path that strict isolation grants (Node reads them as a wildcard and a list), got "/srv/tools/*"',
    );
    expect(() => workerExecArgv('strict', paths('/srv/a,b'), { allowAddons: false })).toThrow(
      'Expected no `*` or `,` in a path that strict isolation grants (Node reads them as a wildcard and a list), got "/srv/a,b"',
    );
  });
});
