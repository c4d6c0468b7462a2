/**
 * Strict isolation and symbolic links. Node's permission model checks the path a tool asks for,
 * with its `..` resolved as text; the system then follows links. So a strict package is refused
 * when its snapshot would hold a link leading out of it, or a link to a folder above itself; links
 * where no strict worker reads don't count (snapshot-links.test.ts checks the rule itself).
 */
import { cp, mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { workerExecArgv } from '../dist/src/calls/isolation.js';
import { type LoadReport, outcomeText, ToolHost } from '../dist/src/index.js';
import { expectAllLeftOut, recordingLogger } from './support/host-harness.js';
import {
  CLIMBING_REASON,
  copyWithClimbingLink,
  copyWithEscapingLink,
  removeDir,
  tempDir,
} from './support/tool-packages.js';

const OWN_FILES = fileURLToPath(new URL('../fixtures/strict/own-files', import.meta.url));
/** `node:sqlite` where this Node has it (22 and later; named by a variable: Node 20's types have none). */
const SQLITE_MODULE = 'node:sqlite';
const SQLITE: unknown = await import(SQLITE_MODULE).catch(() => undefined);
/** The error result of an operation the strict tier's permission model refused. */
const denied = (permission: string, resource?: string) => ({
  code: 'TOOL_ACCESS_DENIED',
  message: `the strict isolation tier refused ${permission}${resource === undefined ? '' : ` on ${resource}`}`,
});

let root: string;
let host: ToolHost | undefined;

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
  root = await tempDir('toolhost-strict-links-');
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  await removeDir(root);
});

/** A strict host, and its report of loading the package at `source`. */
async function loadStrict(source: string): Promise<{ strict: ToolHost; report: LoadReport }> {
  host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'strict', logger: recordingLogger() });
  return { strict: host, report: await host.load(source) };
}

/** A strict host with the package at `source` loaded, every module offered. */
async function strictHost(source: string): Promise<ToolHost> {
  const { strict, report } = await loadStrict(source);
  expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
  return strict;
}

async function expectNextCallWorks(strict: ToolHost): Promise<void> {
  const manifest = outcomeText(await strict.call('strict_read_own_file', { rel: '../package.json' }));
  expect(JSON.parse(manifest).name).toBe('strict-own-files');
}

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
    const { copy, link, target } = await copyWithClimbingLink(OWN_FILES, root);
    const { strict, report } = await loadStrict(copy);
    expectAllLeftOut(report, 'MODULE_OUTSIDE_PACKAGE', CLIMBING_REASON('strict isolation', link, target));
    expect(strict.list()).toEqual([]);
  });

  it('a package holding a symbolic link that leads outside it is left out under strict, and nothing is read', async () => {
    const { copy, link, target } = await copyWithEscapingLink(OWN_FILES, root);
    const { strict, report } = await loadStrict(copy);
    expectAllLeftOut(
      report,
      'MODULE_OUTSIDE_PACKAGE',
      `strict isolation can't confine this package: ${link} is a symbolic link to ${target}, outside the package (Node's permission model follows symbolic links)`,
    );
    expect(strict.list()).toEqual([]);
    const outcome = await strict.call('strict_read_path', { path: join(copy, 'notes.txt') });
    expect(outcome.error?.code).toBe('UNKNOWN_TOOL');
  });

  it('a symbolic link that stays inside the package is fine under strict, and reads as its copy', async () => {
    const copy = join(root, 'hostile-copy');
    await cp(OWN_FILES, copy, { recursive: true });
    await symlink('../package.json', join(copy, 'tools', 'manifest-link.json'));
    await mkdir(join(copy, 'node_modules', '.bin'), { recursive: true });
    await symlink('../../tools/read-file.js', join(copy, 'node_modules', '.bin', 'read-file'));
    const strict = await strictHost(copy);
    const outcome = await strict.call('strict_read_own_file', { rel: './manifest-link.json' });
    expect(outcome.isError).toBe(false);
    expect(outcomeText(outcome)).toBe(await readFile(join(copy, 'package.json'), 'latin1'));
  });

  it('a dependency its tools can import, linked from outside the package (npm link), leaves the package out under strict', async () => {
    const copy = join(root, 'hostile-copy');
    await cp(OWN_FILES, copy, { recursive: true });
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
    const { report } = await loadStrict(copy);
    const link = join(await realpath(copy), 'node_modules', 'linked-dep');
    expectAllLeftOut(
      report,
      'MODULE_OUTSIDE_PACKAGE',
      `strict isolation can't confine this package: ${link} is a symbolic link to ${await realpath(elsewhere)}, outside the package (Node's permission model follows symbolic links)`,
    );
  });

  it('a link out of the package where no tool can read it (a linked devDependency, a .git folder) is fine under strict', async () => {
    const copy = join(root, 'hostile-copy');
    await cp(OWN_FILES, copy, { recursive: true });
    const elsewhere = join(root, 'linked-dev-tool');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'package.json'), '{"name":"linked-dev-tool"}');
    await mkdir(join(copy, 'node_modules'));
    await symlink(elsewhere, join(copy, 'node_modules', 'linked-dev-tool'));
    await mkdir(join(copy, '.git'));
    await symlink(join(root, 'secrets.txt'), join(copy, '.git', 'secrets'));
    const strict = await strictHost(copy);
    const outcome = await strict.call('strict_read_path', { path: join(elsewhere, 'package.json') });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', join(elsewhere, 'package.json')));
    await expectNextCallWorks(strict);
  });

  it('a tool that copies with fs.cpSync is refused (on Node 22 and later it makes the links it copies past the permission model)', async () => {
    const strict = await strictHost(OWN_FILES);
    const refused = await strict.call('strict_copy_own', {});
    expect(refused.error?.code).toBe('TOOL_ACCESS_DENIED');
    expect(refused.error?.message).toMatch(/^the strict isolation tier refused fs\.cpSync on \/.+\/copy$/);
    await expectNextCallWorks(strict);
  });

  it('a tool that opens a SQLite database is refused (SQLite opens its files itself, past the permission model)', async ({
    skip,
  }) => {
    skip(!SQLITE, `Node ${process.version} has no node:sqlite`);
    const outside = join(root, 'outside.db');
    const db = new (
      SQLITE as { DatabaseSync: new (path: string) => { exec(sql: string): void; close(): void } }
    ).DatabaseSync(outside);
    db.exec("CREATE TABLE secrets (value TEXT); INSERT INTO secrets VALUES ('sk-fake')");
    db.close();
    const strict = await strictHost(OWN_FILES);
    const refused = await strict.call('strict_sqlite_open', { path: outside });
    expect(refused.error).toMatchObject({
      code: 'TOOL_ACCESS_DENIED',
      message: 'the strict isolation tier refused node:sqlite',
    });
    await expectNextCallWorks(strict);
  });
});
