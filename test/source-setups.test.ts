/**
 * Everyday setups of sources: packages installed as symbolic links (`npm link`, pnpm, plugin
 * managers), a module loaded beside the package that already serves it, and sources that name a
 * package by its package.json.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ModuleStatus, outcomeText, ToolHost, type ToolSourceHandle } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource, whenStatus, writePackage } from './support/tool-packages.js';

let root: string;
let host: ToolHost;
let handle: ToolSourceHandle | undefined;

beforeEach(async () => {
  root = await tempDir('toolhost-source-setups-');
  host = new ToolHost({ isolation: 'worker', dataDir: join(root, '.data'), logger: recordingLogger() });
});

afterEach(async () => {
  await handle?.close();
  handle = undefined;
  await host.close();
  await removeDir(root);
});

const offered = (statuses: ModuleStatus[], name: string) =>
  statuses.some((status) => status.name === name && status.state === 'offered');

describe('a watched folder holding symbolic links', () => {
  it('offers a linked package, follows changes inside it, and says when a link dangles', async () => {
    const linkedPackage = await writePackage(join(root, 'work', 'greeter'), {
      'greet.js': toolSource('greet', "'hello v1'"),
    });
    const watched = join(root, 'plugins');
    await mkdir(watched);
    await symlink(linkedPackage, join(watched, 'greeter'));
    await symlink(join(root, 'work', 'gone'), join(watched, 'dangling'));

    handle = await host.watch(watched, { debounceMs: 30, stableMs: 20 });

    expect(host.list().map((tool) => tool.name)).toEqual(['greet']);
    expect(outcomeText(await host.call('greet', {}))).toBe('hello v1');
    expect(host.status().find((status) => status.path === join(watched, 'dangling'))).toMatchObject({
      state: 'left-out',
      code: 'SOURCE_UNREADABLE',
      reason: `${join(watched, 'dangling')} is a symbolic link to ${join(root, 'work', 'gone')}, which does not exist`,
    });

    // Edited where the link points, outside the watched folder.
    const [before] = host.status().filter((status) => status.name === 'greet');
    await writeFile(join(linkedPackage, 'tools', 'greet.js'), toolSource('greet', "'hello v2'"));
    await whenStatus(host, (statuses) =>
      statuses.some((status) => status.name === 'greet' && status.version !== before?.version),
    );
    expect(outcomeText(await host.call('greet', {}))).toBe('hello v2');
  });
});

describe('a module of a package that is already loaded', () => {
  it('loaded on its own, says the package serves it; unloading it is not a success', async () => {
    const pkg = await writePackage(join(root, 'pkg'), { 'x.js': toolSource('x_tool', "'x'") });
    const module = join(pkg, 'tools', 'x.js');
    await host.load(pkg);

    const report = await host.load(module);

    expect(report).toMatchObject({
      source: module,
      kind: 'module',
      servedBy: pkg,
      modules: [{ path: module, source: pkg, state: 'offered', name: 'x_tool' }],
    });
    expect(host.unload(module)).toBe(false);
    expect(host.list().map((tool) => tool.name)).toEqual(['x_tool']);
    expect(outcomeText(await host.call('x_tool', {}))).toBe('x');
    expect(host.unload(pkg)).toBe(true);
    expect(host.list()).toEqual([]);
  });

  it('loaded on its own first, keeps the tool; the package says why its copy is left out', async () => {
    const pkg = await writePackage(join(root, 'pkg'), { 'x.js': toolSource('x_tool', "'x'") });
    const module = join(pkg, 'tools', 'x.js');
    await host.load(module);

    const report = await host.load(pkg);

    expect(report.modules).toMatchObject([
      {
        path: module,
        source: pkg,
        state: 'left-out',
        code: 'NAME_TAKEN',
        reason: `this module is already loaded on its own (${module}); unload that to serve it from this package`,
      },
    ]);
    expect(host.unload(module)).toBe(true);
    expect(offered(host.status(), 'x_tool')).toBe(true);
    expect(host.status().find((status) => status.name === 'x_tool')?.source).toBe(pkg);
  });
});

describe('a package named by its package.json', () => {
  it('is loaded as its folder, from a source and from load()', async () => {
    const pkg = await writePackage(join(root, 'pkg'), { 'm.js': toolSource('manifest_named', "'ok'") });
    handle = await host.addSource([join(pkg, 'package.json')]);
    expect(host.status()).toMatchObject([{ source: pkg, state: 'offered', name: 'manifest_named' }]);
    expect(outcomeText(await host.call('manifest_named', {}))).toBe('ok');

    const report = await host.load(join(pkg, 'package.json'));
    expect(report).toMatchObject({ source: pkg, kind: 'package', modules: [{ state: 'offered' }] });
  });
});
