/**
 * Strict isolation and the file system: reads only inside the package (and what the worker code
 * needs), writes only inside the domain's tmp folder. The worker tier is run beside it where that
 * documents what it does not contain.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { strictTierGaps, workerExecArgv } from '../dist/src/calls/isolation.js';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { runCli } from './support/cli-run.js';
import { expectAllLeftOut, recordingLogger } from './support/host-harness.js';
import {
  CLIMBING_REASON,
  copyWithClimbingLink,
  copyWithEscapingLink,
  removeDir,
  tempDir,
} from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const LOAD_TIME_READ = fileURLToPath(new URL('../fixtures/strict/load-time-read', import.meta.url));
const HOST_SOURCE = fileURLToPath(new URL('../src/host/tool-host.ts', import.meta.url));
/**
 * Node 22 and later let every worker under the permission model read its process's working
 * directory (here the repository, which holds the host's sources); strict takes it back where Node
 * can (24.20 and 26.3 and later), and says so where it can't.
 */
const WORKING_DIRECTORY_READABLE = strictTierGaps().some((gap) => gap.includes('working directory'));
const WORKING_DIRECTORY_GAP = `Node ${process.version} grants workers the host's working directory and can't take it back (README)`;
/** The error result of an operation the strict tier's permission model refused. */
const denied = (permission: string, resource?: string) => ({
  code: 'TOOL_ACCESS_DENIED',
  message: `the strict isolation tier refused ${permission}${resource === undefined ? '' : ` on ${resource}`}`,
});

let root: string;
let host: ToolHost;

/**
 * What a bare worker under strict's flags, granted `granted` as its snapshot, reads at each path:
 * the file's text, or the error's code.
 */
async function readInStrictWorker(granted: string, paths: Record<string, string>): Promise<unknown> {
  const execArgv = workerExecArgv(
    'strict',
    { domain: granted, snapshot: granted, tmpDir: join(root, 'tmp') },
    { allowAddons: false },
  );
  const code = `const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const attempt = (path) => { try { return readFileSync(path, 'utf8'); } catch (error) { return error.code; } };
parentPort.postMessage(Object.fromEntries(Object.entries(workerData).map(([key, path]) => [key, attempt(path)])));`;
  const worker = new Worker(code, { eval: true, execArgv, env: {}, workerData: paths });
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

beforeEach(async () => {
  root = await tempDir('toolhost-strict-files-');
});

afterEach(async () => {
  await host?.close();
  await removeDir(root);
});

async function hostWith(isolation: 'worker' | 'strict', source = HOSTILE): Promise<ToolHost> {
  host = new ToolHost({ dataDir: join(root, 'data'), isolation, logger: recordingLogger() });
  const report = await host.load(source);
  expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
  return host;
}

async function expectNextCallWorks(): Promise<void> {
  const next = await host.call('strict_tmp_roundtrip', {});
  expect(next.isError).toBe(false);
  expect(outcomeText(next)).toBe('kept in tmpDir');
}

describe("isolation: 'strict'", () => {
  it('a tool can write and read back files in its own tmpDir', async () => {
    await hostWith('strict');
    const outcome = await host.call('strict_tmp_roundtrip', {});
    expect(outcome.isError).toBe(false);
    expect(outcomeText(outcome)).toBe('kept in tmpDir');
    await expectNextCallWorks();
  });

  it('a tool reads the files of its own package where its module is (its snapshot), and nothing of the package folder', async () => {
    // A copy outside the host's working directory, which Node 22 lets every strict worker read.
    const copy = join(root, 'hostile-copy');
    await cp(HOSTILE, copy, { recursive: true });
    await hostWith('strict', copy);
    const own = await host.call('strict_read_own_file', { rel: '../package.json' });
    expect(own.isError).toBe(false);
    expect(JSON.parse(outcomeText(own)).name).toBe('strict-hostile');
    const original = join(copy, 'package.json');
    const outcome = await host.call('strict_read_file', { path: original });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', original));
    await expectNextCallWorks();
  });

  it('a tool that writes outside its tmpDir gets an error result and no file appears', async () => {
    await hostWith('strict');
    const target = join(root, 'written-by-tool.txt');
    const outcome = await host.call('strict_write_file', { path: target, text: 'pwned' });
    expect(outcome.error).toMatchObject(denied('FileSystemWrite', target));
    expect(existsSync(target)).toBe(false);
    await expectNextCallWorks();
  });

  it("a tool that reads the host's own sources (in the host's working directory) gets an error result without their contents", async ({
    skip,
  }) => {
    skip(WORKING_DIRECTORY_READABLE, WORKING_DIRECTORY_GAP);
    await hostWith('strict');
    const outcome = await host.call('strict_read_file', { path: HOST_SOURCE });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', HOST_SOURCE));
    expect(outcomeText(outcome)).toBe(`the strict isolation tier refused FileSystemRead on ${HOST_SOURCE}`);
    await expectNextCallWorks();
  });

  it('a tool that reads a secrets file outside its package gets an error result without the secret', async () => {
    await hostWith('strict');
    const secrets = join(root, 'secrets.env');
    await writeFile(secrets, 'API_TOKEN=sk-fake-secret-for-strict-test\n');
    const outcome = await host.call('strict_read_file', { path: secrets });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', secrets));
    expect(outcomeText(outcome)).not.toContain('sk-fake-secret');
    await expectNextCallWorks();
  });

  it('a module that reads outside its package while its declaration is read is left out', async ({
    skip,
  }) => {
    skip(WORKING_DIRECTORY_READABLE, WORKING_DIRECTORY_GAP);
    host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'strict', logger: recordingLogger() });
    const report = await host.load(LOAD_TIME_READ);
    expect(report.modules).toHaveLength(1);
    expect(report.modules[0]).toMatchObject({
      state: 'left-out',
      code: 'IMPORT_FAILED',
      // Where it was refused, then Node's own message; Node 22.23.5 and later add a hint ("Use
      // --allow-fs-read to …").
      reason: expect.stringMatching(
        /^tools\/reads-host-source\.js:\d+:\d+: Access to this API has been restricted\b/,
      ),
    });
    expect(host.list()).toEqual([]);
  });

  it("on Node 22 a tool can read the host's working directory, where the host's sources are (the documented gap)", async ({
    skip,
  }) => {
    skip(!WORKING_DIRECTORY_READABLE, `Node ${process.version} takes the working directory back`);
    await hostWith('strict');
    const outcome = await host.call('strict_read_file', { path: HOST_SOURCE });
    expect(outcome.isError).toBe(false);
    // The head: a long output is cut for the model in the middle.
    expect(outcomeText(outcome).slice(0, 200)).toBe((await readFile(HOST_SOURCE, 'latin1')).slice(0, 200));
    const report = await host.load(LOAD_TIME_READ);
    expect(report.modules[0]?.state).toBe('offered');
  });

  it('a tool that asks where a path outside its grants leads (fs.realpathSync) gets an error result', async () => {
    // Node's own answers it on Node 20 and on 26.0 to 26.10: strict's workers check it themselves.
    await hostWith('strict');
    const secrets = join(root, 'secrets.env');
    await writeFile(secrets, 'API_TOKEN=sk-fake-secret-for-strict-test\n');
    const outcome = await host.call('strict_probe_path', { path: secrets });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', secrets));
    await expectNextCallWorks();
  });

  it('a host started inside the package folder gives its strict tools no read of that folder', async ({
    skip,
  }) => {
    skip(WORKING_DIRECTORY_READABLE, WORKING_DIRECTORY_GAP);
    const call = (tool: string, args: unknown) =>
      runCli(['call', '--isolation', 'strict', HOSTILE, tool, JSON.stringify(args)], {
        tmpDir: root,
        cwd: HOSTILE,
      });
    const folder = await call('strict_read_file', { path: 'package.json' });
    expect(folder.stderr.split('\n')[0]).toBe(
      'toolhost: the tool "strict_read_file" failed: TOOL_ACCESS_DENIED: the strict isolation tier refused FileSystemRead on package.json',
    );
    expect(folder.code).toBe(1);
    const own = await call('strict_read_own_file', { rel: '../package.json' });
    expect(own.stderr).toBe('');
    expect(own.code).toBe(0);
    expect(JSON.parse(own.stdout).name).toBe('strict-hostile');
  });

  it.skipIf(process.platform !== 'linux')(
    "a tool that reads /proc/self/environ (the host's start-up environment) gets an error result",
    async () => {
      await hostWith('strict');
      const outcome = await host.call('strict_read_file', { path: '/proc/self/environ' });
      expect(outcome.error).toMatchObject(denied('FileSystemRead', '/proc/self/environ'));
      await expectNextCallWorks();
    },
  );
});

describe('symbolic links and strict isolation', () => {
  it("Node's permission model follows a symbolic link out of a granted folder (why strict checks packages for them)", async () => {
    const granted = join(root, 'granted');
    const secrets = join(root, 'secrets.txt');
    await mkdir(granted);
    await writeFile(secrets, 'outside the grant');
    await symlink(secrets, join(granted, 'link.txt'));
    const reply = await readInStrictWorker(granted, { direct: secrets, viaLink: join(granted, 'link.txt') });
    expect(reply).toEqual({ direct: 'ERR_ACCESS_DENIED', viaLink: 'outside the grant' });
  });

  it("Node's permission model reads '..' as text before the system follows a link (why strict refuses links to folders above them)", async () => {
    const granted = join(root, 'granted');
    const secrets = join(root, 'secrets.txt');
    await mkdir(join(granted, 'sub'), { recursive: true });
    await writeFile(secrets, 'outside the grant');
    await symlink('..', join(granted, 'sub', 'up'));
    // As text `granted/sub/up/sub/secrets.txt`; to the system `granted/../secrets.txt`.
    const climbing = `${granted}/sub/up/sub/up/../secrets.txt`;
    const reply = await readInStrictWorker(granted, { direct: secrets, climbing });
    expect(reply).toEqual({ direct: 'ERR_ACCESS_DENIED', climbing: 'outside the grant' });
  });

  it('a package holding a link to a folder above itself is left out under strict', async () => {
    const { copy, link, target } = await copyWithClimbingLink(HOSTILE, root);
    host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'strict', logger: recordingLogger() });
    const report = await host.load(copy);
    expectAllLeftOut(report, 'MODULE_OUTSIDE_PACKAGE', CLIMBING_REASON('strict isolation', link, target));
    expect(host.list()).toEqual([]);
  });

  it('a package holding a symbolic link that leads outside it is left out under strict, and nothing is read', async () => {
    const { copy, link, target } = await copyWithEscapingLink(HOSTILE, root);
    host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'strict', logger: recordingLogger() });
    const report = await host.load(copy);
    expectAllLeftOut(
      report,
      'MODULE_OUTSIDE_PACKAGE',
      `strict isolation can't confine this package: ${link} is a symbolic link to ${target}, outside the package (Node's permission model follows symbolic links)`,
    );
    expect(host.list()).toEqual([]);
    const outcome = await host.call('strict_read_file', { path: join(copy, 'notes.txt') });
    expect(outcome.error?.code).toBe('UNKNOWN_TOOL');
  });

  it('a symbolic link that stays inside the package is fine under strict, and reads as its copy', async () => {
    const copy = join(root, 'hostile-copy');
    await cp(HOSTILE, copy, { recursive: true });
    await symlink('../package.json', join(copy, 'tools', 'manifest-link.json'));
    await mkdir(join(copy, 'node_modules', '.bin'), { recursive: true });
    await symlink('../../tools/read-file.js', join(copy, 'node_modules', '.bin', 'read-file'));
    await hostWith('strict', copy);
    const outcome = await host.call('strict_read_own_file', { rel: './manifest-link.json' });
    expect(outcome.isError).toBe(false);
    expect(outcomeText(outcome)).toBe(await readFile(join(copy, 'package.json'), 'latin1'));
  });

  it('a dependency its tools can import, linked from outside the package (npm link), leaves the package out under strict', async () => {
    const copy = join(root, 'hostile-copy');
    await cp(HOSTILE, copy, { recursive: true });
    const manifest = JSON.parse(await readFile(join(copy, 'package.json'), 'utf8'));
    await writeFile(
      join(copy, 'package.json'),
      JSON.stringify({ ...manifest, dependencies: { 'linked-dep': '*' } }),
    );
    const elsewhere = join(root, 'linked-dep');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'package.json'), '{"name":"linked-dep"}');
    await mkdir(join(copy, 'node_modules'));
    await symlink(elsewhere, join(copy, 'node_modules', 'linked-dep'));
    host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'strict', logger: recordingLogger() });
    const report = await host.load(copy);
    const link = join(await realpath(copy), 'node_modules', 'linked-dep');
    expectAllLeftOut(
      report,
      'MODULE_OUTSIDE_PACKAGE',
      `strict isolation can't confine this package: ${link} is a symbolic link to ${await realpath(elsewhere)}, outside the package (Node's permission model follows symbolic links)`,
    );
  });

  it('a link out of the package where no tool can read it (a linked devDependency, a .git folder) is fine under strict', async () => {
    const copy = join(root, 'hostile-copy');
    await cp(HOSTILE, copy, { recursive: true });
    const elsewhere = join(root, 'linked-dev-tool');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'package.json'), '{"name":"linked-dev-tool"}');
    await mkdir(join(copy, 'node_modules'));
    await symlink(elsewhere, join(copy, 'node_modules', 'linked-dev-tool'));
    await mkdir(join(copy, '.git'));
    await symlink(join(root, 'secrets.txt'), join(copy, '.git', 'secrets'));
    await hostWith('strict', copy);
    const outcome = await host.call('strict_read_file', { path: join(elsewhere, 'package.json') });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', join(elsewhere, 'package.json')));
    await expectNextCallWorks();
  });
});

describe("what the 'worker' tier does not contain (files)", () => {
  it('a tool in the worker tier can write outside its tmpDir', async () => {
    await hostWith('worker');
    const target = join(root, 'written-by-tool.txt');
    const outcome = await host.call('strict_write_file', { path: target, text: 'written' });
    expect(outcome.isError).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('written');
  });

  it('a tool in the worker tier can read a secrets file outside its package', async () => {
    await hostWith('worker');
    const secrets = join(root, 'secrets.env');
    await writeFile(secrets, 'API_TOKEN=sk-fake-secret-for-worker-test\n');
    const outcome = await host.call('strict_read_file', { path: secrets });
    expect(outcomeText(outcome)).toBe('API_TOKEN=sk-fake-secret-for-worker-test\n');
  });

  it.skipIf(process.platform !== 'linux')(
    "a tool in the worker tier can read the host's start-up environment from /proc/self/environ",
    async () => {
      await hostWith('worker');
      const outcome = await host.call('strict_read_file', { path: '/proc/self/environ' });
      expect(outcome.isError).toBe(false);
      expect(outcomeText(outcome)).toContain('PATH=');
    },
  );
});
