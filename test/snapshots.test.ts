/**
 * What runs is what was read: calls run from an immutable snapshot of the package version whose
 * declaration was read, whatever happens to the package on disk meanwhile; an unchanged
 * dependency tree is built once and shared between versions, from the store and never linked to the
 * installed files; a snapshot goes with its version.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource, writePackage } from './support/tool-packages.js';

let root: string;
let host: ToolHost;

beforeEach(async () => {
  root = await tempDir('toolhost-snapshots-');
  host = new ToolHost({
    isolation: 'worker',
    dataDir: join(root, 'data'),
    tempRoot: join(root, 'tmp'),
    cacheDir: join(root, 'cache'),
    logger: recordingLogger(),
  });
  await mkdir(join(root, 'tmp'));
});

afterEach(async () => {
  await host.close();
  await removeDir(root);
});

/** A package whose tool imports a file of its own and a dependency, and reports where it runs from. */
async function writeDependentPackage(folder: string, label: string): Promise<string> {
  await writePackage(folder, {
    'where.js': `import { label } from '../lib/label.js';
import { dependency } from 'tiny-dep';
export const name = 'where';
export const description = 'Says which version runs, and from where';
export const parameterSchema = { type: 'object' };
export function run() {
  return JSON.stringify({ label, dependency, module: import.meta.url, resolved: import.meta.resolve('tiny-dep') });
}
`,
  });
  await mkdir(join(folder, 'lib'), { recursive: true });
  await writeFile(join(folder, 'lib', 'label.js'), `export const label = ${JSON.stringify(label)};\n`);
  const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8'));
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ ...manifest, dependencies: { 'tiny-dep': '1.0.0' } }),
  );
  const dep = join(folder, 'node_modules', 'tiny-dep');
  await mkdir(dep, { recursive: true });
  await writeFile(
    join(dep, 'package.json'),
    JSON.stringify({ name: 'tiny-dep', type: 'module', main: 'index.js' }),
  );
  await writeFile(join(dep, 'index.js'), "export const dependency = 'tiny-dep 1';\n");
  return folder;
}

interface Where {
  label: string;
  dependency: string;
  module: string;
  resolved: string;
}

async function where(): Promise<Where> {
  const outcome = await host.call('where', {});
  expect(outcome.isError).toBe(false);
  return JSON.parse(outcomeText(outcome)) as Where;
}

describe('calls run the version that was read', () => {
  it("a worker that starts after the package changed on disk runs the read version, and the change's code never runs", async () => {
    const pkg = await writeDependentPackage(join(root, 'pkg'), 'v1');
    await host.load(pkg);
    // No call yet, so no worker: the first one starts after everything below.
    const marker = join(root, 'v2-ran');
    await writeFile(
      join(pkg, 'tools', 'where.js'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport const name = 'where';`,
    );
    await writeFile(join(pkg, 'lib', 'label.js'), 'export const label = "v2";\n');
    // A package manager replaces an installed file (a new file renamed into place), never edits it.
    const installed = join(pkg, 'node_modules', 'tiny-dep', 'index.js');
    await writeFile(`${installed}.new`, 'export const dependency = "tiny-dep 2";\n');
    await rename(`${installed}.new`, installed);

    const answer = await where();
    expect(answer).toMatchObject({ label: 'v1', dependency: 'tiny-dep 1' });
    expect(fileURLToPath(answer.module).startsWith(join(root, 'tmp'))).toBe(true);
    expect(existsSync(marker)).toBe(false);
    expect(host.list().map((tool) => tool.description)).toEqual(['Says which version runs, and from where']);
  });

  it('a new version of the own files reuses the dependency tree, which shares no inode with the package', async () => {
    const pkg = await writeDependentPackage(join(root, 'pkg'), 'v1');
    await host.load(pkg);
    const first = await where();
    await writeFile(join(pkg, 'lib', 'label.js'), 'export const label = "v2";\n');
    await host.load(pkg);
    const second = await where();

    expect([first.label, second.label]).toEqual(['v1', 'v2']);
    expect(second.module).not.toBe(first.module);
    // One dependency tree for both versions, made from the store: the installed file is never linked.
    expect(second.resolved).toBe(first.resolved);
    const installed = await stat(join(pkg, 'node_modules', 'tiny-dep', 'index.js'));
    const inSnapshot = await stat(fileURLToPath(second.resolved));
    expect(inSnapshot.ino).not.toBe(installed.ino);
    expect(installed.nlink).toBe(1);
    expect(await readFile(fileURLToPath(second.resolved), 'utf8')).toBe(
      "export const dependency = 'tiny-dep 1';\n",
    );
  });

  it('a changed dependency is a new version, read again', async () => {
    const pkg = await writeDependentPackage(join(root, 'pkg'), 'v1');
    const [before] = (await host.load(pkg)).modules;
    await writeFile(
      join(pkg, 'node_modules', 'tiny-dep', 'index.js'),
      "export const dependency = 'tiny-dep 2';\n",
    );
    const [after] = (await host.load(pkg)).modules;

    expect(after?.version).not.toBe(before?.version);
    expect((await where()).dependency).toBe('tiny-dep 2');
  });

  it("an old version's snapshot is removed once its calls have answered", async () => {
    const pkg = await writeDependentPackage(join(root, 'pkg'), 'v1');
    await host.load(pkg);
    const old = fileURLToPath((await where()).module);
    await writeFile(join(pkg, 'lib', 'label.js'), 'export const label = "v2";\n');
    await host.load(pkg);
    const current = fileURLToPath((await where()).module);

    await vi.waitFor(() => expect(existsSync(old)).toBe(false), { timeout: 20_000 });
    expect(existsSync(current)).toBe(true);
    await host.unload(pkg);
    await vi.waitFor(() => expect(existsSync(current)).toBe(false), { timeout: 20_000 });
  });

  it('the strict tier imports the package and its dependency from the snapshot', async () => {
    const pkg = await writeDependentPackage(join(root, 'pkg'), 'strict');
    const report = await host.load(pkg, { isolation: 'strict' });
    expect(report.modules.map((module) => module.state)).toEqual(['offered']);
    expect(await where()).toMatchObject({ label: 'strict', dependency: 'tiny-dep 1' });
  });
});

describe('what a snapshot holds', () => {
  it("the author helpers (toolhost/tool) resolve for a package that doesn't install toolhost, strict tier too", async () => {
    const pkg = await writePackage(join(root, 'helped'), {
      'helped.js': `import { withDetails } from 'toolhost/tool';
${toolSource('helped', "withDetails('with helpers', { from: 'toolhost/tool' })")}`,
    });
    for (const isolation of ['worker', 'strict'] as const) {
      await host.load(pkg, { isolation });
      expect(await host.call('helped', {})).toStrictEqual({
        content: [{ type: 'text', text: 'with helpers' }],
        isError: false,
        details: { from: 'toolhost/tool' },
      });
    }
  });

  it('a module loaded on its own runs alone: a missing import names the real path and says what to load', async () => {
    const folder = join(root, 'loose');
    await mkdir(folder);
    await writeFile(join(folder, 'helper.js'), 'export const help = 1;\n');
    const module = join(folder, 'alone.js');
    await writeFile(module, `import { help } from './helper.js';\n${toolSource('alone', 'help')}`);
    const [status] = (await host.load(module)).modules;

    expect(status).toMatchObject({ state: 'left-out', code: 'IMPORT_FAILED' });
    expect(status?.reason).toContain(join(folder, 'helper.js'));
    expect(status?.reason).toContain('load the package folder it belongs to');
    expect(status?.reason).not.toContain(join(root, 'tmp'));
  });

  it('a listed module that is a link inside the package runs from the copy of its target', async () => {
    const pkg = await writePackage(join(root, 'linked'), {
      'real.js': toolSource('linked_tool', "'from the target'"),
    });
    await symlink('real.js', join(pkg, 'tools', 'alias.js'));
    await writeFile(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'linked', type: 'module', toolhost: { tools: ['./tools/alias.js'] } }),
    );
    const report = await host.load(pkg);
    expect(report.modules).toMatchObject([{ path: join(pkg, 'tools', 'real.js'), state: 'offered' }]);
    expect(outcomeText(await host.call('linked_tool', {}))).toBe('from the target');
  });

  it('leaves nothing in the tmp folder once the host is closed', async () => {
    await host.load(await writeDependentPackage(join(root, 'pkg'), 'v1'));
    await where();
    expect(await readdir(join(root, 'tmp'))).toHaveLength(1);
    await host.close();
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });
});
