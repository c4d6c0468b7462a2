/**
 * Loading a package leaves it exactly as it was: size, times, link count and inode of every file
 * and folder (its node_modules included) are the same before and after load, a call, a selftest,
 * a reload and close, in every tier. Its dependencies reach the snapshot from the store, never by
 * a link to the installed files.
 */
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { REPO } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';
import { changedEntries, fileStates, installFromRepo } from './support/package-files.js';
import { removeDir, tempDir, toolSource, writePackage } from './support/tool-packages.js';

const TIERS = ['worker', 'strict', 'process'] as const;

describe.each(TIERS)('loading a package with a node_modules (%s tier)', (isolation) => {
  let root: string;
  let pkg: string;
  let other: string;
  let host: ToolHost;
  let before: Map<string, string>;

  beforeAll(async () => {
    root = await tempDir(`toolhost-untouched-${isolation}-`);
    pkg = join(root, 'dependent');
    await cp(join(REPO, 'fixtures/snapshots/dependent'), pkg, { recursive: true });
    await installFromRepo(pkg, ['debug', 'ms', 'typescript']);
    other = await writePackage(join(root, 'other'), { 'other.js': toolSource('other_tool', "'other fine'") });
    await mkdir(join(root, 'tmp'));
    before = await fileStates(pkg);
    host = new ToolHost({
      isolation,
      tempRoot: join(root, 'tmp'),
      dataDir: join(root, 'data'),
      cacheDir: join(root, 'cache'),
      logger: recordingLogger(),
    });
  });

  afterAll(async () => {
    await host.close();
    await removeDir(root);
  });

  it('changes no file of the package when it is loaded and its tool called', async () => {
    const report = await host.load(pkg);
    expect(report.modules.map((module) => module.state)).toEqual(['offered']);
    const outcome = await host.call('uses_dependencies', {});
    expect(outcome.isError).toBe(false);
    expect(outcomeText(outcome)).toBe('debug function, 2h');
    expect(changedEntries(before, await fileStates(pkg))).toEqual([]);
  });

  it('changes no file of the package when its selftest runs', async () => {
    const [result] = await host.selftest(['uses_dependencies']);
    expect(result).toMatchObject({ name: 'uses_dependencies', status: 'passed' });
    expect(changedEntries(before, await fileStates(pkg))).toEqual([]);
  });

  it('copies the dependencies a tool can import, not the devDependencies', async () => {
    const tmp = join(root, 'tmp');
    const [hostFolder] = await readdir(tmp);
    const snapshots = join(tmp, hostFolder as string, 'snapshots');
    const [domain] = await readdir(snapshots);
    const trees = (await readdir(join(snapshots, domain as string))).filter((name) => name.startsWith('nm-'));
    expect(trees).toHaveLength(1);
    const installed = await readdir(join(snapshots, domain as string, trees[0] as string, 'node_modules'));
    // toolhost is the host's own helpers, standing in for a package that doesn't install it.
    expect(installed.sort()).toEqual(['debug', 'ms', 'toolhost']);
  });

  it('changes no file of the package when it is loaded again by another host, and after both close', async () => {
    const second = new ToolHost({
      isolation,
      tempRoot: join(root, 'tmp'),
      dataDir: join(root, 'data'),
      cacheDir: join(root, 'cache'),
      logger: recordingLogger(),
    });
    try {
      await second.load(pkg);
      await second.load(other);
      expect(outcomeText(await second.call('uses_dependencies', {}))).toBe('debug function, 2h');
      expect(outcomeText(await second.call('other_tool', {}))).toBe('other fine');
    } finally {
      await second.close();
    }
    await host.close();
    expect(changedEntries(before, await fileStates(pkg))).toEqual([]);
    await rm(join(root, 'tmp'), { recursive: true, force: true });
  });
});
