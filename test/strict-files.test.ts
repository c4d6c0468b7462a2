/**
 * Strict isolation and the file system: reads only inside the package's snapshot (and what the
 * worker code needs), writes only inside the domain's tmp folder; strict-links.test.ts has the
 * symbolic links. The worker tier is run beside it where that documents what it does not contain.
 */
import { existsSync } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { strictTierGaps } from '../dist/src/calls/isolation.js';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { runCli } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const OWN_FILES = fileURLToPath(new URL('../fixtures/strict/own-files', import.meta.url));
const LOAD_TIME_READ = fileURLToPath(new URL('../fixtures/strict/load-time-read', import.meta.url));
const HOST_SOURCE = fileURLToPath(new URL('../src/host/tool-host.ts', import.meta.url));
/**
 * Node 22 and later let every worker under the permission model read its process's working
 * directory (here the repository, which holds the host's sources); strict takes it back where Node
 * can (24.20 and 26.3 and later), and says so where it can't.
 */
const WORKING_DIRECTORY_READABLE = strictTierGaps().some((gap) => gap.includes('working directory'));
const WORKING_DIRECTORY_GAP = `Node ${process.version} grants workers the host's working directory and can't take it back (docs/isolation.md)`;
/** The error result of an operation the strict tier's permission model refused. */
const denied = (permission: string, resource?: string) => ({
  code: 'TOOL_ACCESS_DENIED',
  message: `the strict isolation tier refused ${permission}${resource === undefined ? '' : ` on ${resource}`}`,
});

let root: string;
let host: ToolHost;

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
    const copy = join(root, 'own-files-copy');
    await cp(OWN_FILES, copy, { recursive: true });
    await hostWith('strict', copy);
    const readOwn = () => host.call('strict_read_own_file', { rel: '../package.json' });
    expect(JSON.parse(outcomeText(await readOwn())).name).toBe('strict-own-files');
    const original = join(copy, 'package.json');
    const outcome = await host.call('strict_read_path', { path: original });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', original));
    expect((await readOwn()).isError).toBe(false);
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
      runCli(['call', '--isolation', 'strict', OWN_FILES, tool, JSON.stringify(args)], {
        tmpDir: root,
        cwd: OWN_FILES,
      });
    const folder = await call('strict_read_path', { path: 'package.json' });
    expect(folder.stderr.split('\n')[0]).toBe(
      'toolhost: the tool "strict_read_path" failed: TOOL_ACCESS_DENIED: the strict isolation tier refused FileSystemRead on package.json',
    );
    expect(folder.code).toBe(1);
    const own = await call('strict_read_own_file', { rel: '../package.json' });
    expect(own.stderr).toBe('');
    expect(own.code).toBe(0);
    expect(JSON.parse(own.stdout).name).toBe('strict-own-files');
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
