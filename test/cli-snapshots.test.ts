/**
 * The built `toolhost` command on a package as a new user has it: `toolhost init`, then a
 * node_modules (here copied from this repository's installed packages, since tests have no registry:
 * toolhost itself and TypeScript, the template's devDependencies, and a real dependency). Its
 * selftest passes on the first run and the next, and neither `selftest`, `list` nor `serve` changes
 * a file of the package; the second run links what the first copied into the store.
 */
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir, REPO, runCli } from './support/cli-run.js';
import { startStdio } from './support/mcp-serve.js';
import { changedEntries, fileStates, installFromRepo } from './support/package-files.js';

let tmp: ReturnType<typeof freshDir>;
let work: ReturnType<typeof freshDir>;
let pkg: string;
let before: Map<string, string>;
const cache = () => join(work.path, 'cache');
const run = (args: string[]) =>
  runCli(args, { tmpDir: tmp.path, cwd: pkg, env: { TOOLHOST_CACHE_DIR: cache() } });

beforeAll(async () => {
  tmp = freshDir('cli-snapshots-tmp');
  work = freshDir('cli-snapshots-work');
  const created = await runCli(['init', 'fresh-tools'], { tmpDir: tmp.path, cwd: work.path });
  expect(created.code).toBe(0);
  pkg = join(work.path, 'fresh-tools');
  // As `npm install` lays it out: the devDependencies (toolhost, with its own dependencies, and
  // TypeScript) and one dependency the package's tool really imports.
  const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8'));
  manifest.dependencies = { debug: '^4.4.0' };
  await writeFile(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await installFromRepo(pkg, ['typescript', 'debug', 'ms', 'piscina', 'ajv', 'fast-deep-equal']);
  const toolhost = join(pkg, 'node_modules', 'toolhost');
  await mkdir(toolhost, { recursive: true });
  await cp(join(REPO, 'package.json'), join(toolhost, 'package.json'));
  await cp(join(REPO, 'dist'), join(toolhost, 'dist'), { recursive: true });
  await cp(
    join(REPO, 'fixtures/snapshots/dependent/tools/uses-dependencies.js'),
    join(pkg, 'tools', 'uses-dependencies.js'),
  );
  manifest.toolhost.tools.push('./tools/uses-dependencies.js');
  await writeFile(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  before = await fileStates(pkg);
});

afterAll(() => {
  tmp.remove();
  work.remove();
});

describe('toolhost on a package with its node_modules installed', () => {
  it('toolhost selftest . passes, and changes no file of the package', async () => {
    const selftest = await run(['selftest', '.']);
    expect(selftest.stderr).toBe('');
    expect(selftest.stdout).not.toContain('modified');
    expect(selftest.stdout).toContain('2 tools: 2 passed, 0 failed');
    expect(selftest.code).toBe(0);
    expect(changedEntries(before, await fileStates(pkg))).toEqual([]);
  });

  it('a second selftest and a list pass too, linking the store rather than copying into it', async () => {
    const copies = await storeCopies();
    const selftest = await run(['selftest', '.']);
    expect(selftest.code).toBe(0);
    expect(selftest.stdout).toContain('2 tools: 2 passed, 0 failed');
    const list = await run(['list', '.']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('uses_dependencies');
    expect(await storeCopies()).toEqual(copies);
    expect(changedEntries(before, await fileStates(pkg))).toEqual([]);
  });

  it('toolhost serve . answers, calls the tool, and changes no file of the package', async () => {
    const served = await startStdio([pkg], tmp.path);
    try {
      const result = await served.client.callTool({ name: 'uses_dependencies', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'debug function, 2h' }]);
    } finally {
      await served.client.close();
    }
    expect(served.clientErrors).toEqual([]);
    expect(changedEntries(before, await fileStates(pkg))).toEqual([]);
  });
});

/** The copies in the store, by name. */
async function storeCopies(): Promise<string[]> {
  const files = join(cache(), 'files');
  const names: string[] = [];
  for (const bucket of await readdir(files)) names.push(...(await readdir(join(files, bucket))));
  return names.sort();
}
