/**
 * One module names every folder a host makes for its snapshots, and what reads them (the selftest
 * command looking for a tool writing beside its own module) finds exactly what a host made; a load
 * report says what the loaded version's manifest asks for, so no caller reads the manifest again.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { snapshotFoldersOf, tempRootName, tempRootPid } from '../dist/src/snapshot/layout.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource, writePackage } from './support/tool-packages.js';

let root: string;
let tmp: string;
let host: ToolHost;

/** Folders of their own for a second host in a test. */
function hostPlaces(name: string) {
  return {
    dataDir: join(root, name, 'data'),
    tempRoot: tmp,
    cacheDir: join(root, name, 'cache'),
    logger: recordingLogger(),
  };
}

beforeEach(async () => {
  root = await tempDir('toolhost-layout-');
  tmp = join(root, 'tmp');
  await mkdir(tmp);
  host = new ToolHost({
    isolation: 'worker',
    dataDir: join(root, 'data'),
    tempRoot: tmp,
    cacheDir: join(root, 'cache'),
    logger: recordingLogger(),
  });
});

afterEach(async () => {
  await host.close();
  await removeDir(root);
});

describe('the snapshot layout', () => {
  it('finds the version folder a host made for a package, holding its files, and nothing once the host closed', async () => {
    const folder = await writePackage(join(root, 'weather'), {
      'forecast.js': toolSource('forecast', "'sunny'"),
    });
    const report = await host.load(folder);
    const version = report.modules[0]?.version;
    expect(version).toBeDefined();

    const found = await snapshotFoldersOf(tmp, report.source, version ?? '');
    expect(found).toHaveLength(1);
    const [copy = ''] = found;
    expect(await readFile(join(copy, 'tools', 'forecast.js'), 'utf8')).toBe(
      await readFile(join(folder, 'tools', 'forecast.js'), 'utf8'),
    );
    expect(await snapshotFoldersOf(tmp, report.source, 'another-version')).toEqual([]);

    await host.close();
    expect(existsSync(copy)).toBe(false);
    expect(await snapshotFoldersOf(tmp, report.source, version ?? '')).toEqual([]);
  });

  it('names a host temp root by its process, and reads no pid from any other name', () => {
    expect(tempRootPid(tempRootName())).toBe(process.pid);
    for (const name of [
      'toolhost-selftest-a1b2c3',
      'toolhost-0-deadbeef',
      'toolhost-12-xyz',
      'snapshots',
      '',
    ]) {
      expect(tempRootPid(name), name).toBeUndefined();
    }
  });

  it('makes this host’s temp root under its tmpDir by that name', async () => {
    const folder = await writePackage(join(root, 'clock'), { 'now.js': toolSource('now', "'noon'") });
    await host.load(folder);
    const roots = await readdir(tmp);
    expect(roots.map((name) => tempRootPid(name))).toEqual([process.pid]);
  });
});

describe('a load report', () => {
  it('carries the package name and what the loaded manifest asks for', async () => {
    const folder = await writePackage(join(root, 'weather'), {
      'forecast.js': toolSource('forecast', "'sunny'"),
    });
    const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8'));
    manifest.toolhost.permissions = { net: ['api.weather.gov'] };
    await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));

    const report = await host.load(folder);
    expect(report).toMatchObject({
      kind: 'package',
      packageName: 'weather',
      permissions: { net: ['api.weather.gov'] },
    });
    // A changed manifest is a new version: the next load reports what that one asks for.
    manifest.toolhost.permissions = { net: true };
    await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
    expect((await host.load(folder)).permissions).toEqual({ net: true });
  });

  it('says what this host grants of what the manifest asks: none, every host it asks for, or the hosts both name', async () => {
    const folder = await writePackage(join(root, 'weather'), {
      'forecast.js': toolSource('forecast', "'sunny'"),
    });
    const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8'));
    manifest.toolhost.permissions = { net: ['api.weather.gov', 'tiles.example.com'] };
    await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
    expect((await host.load(folder)).network).toBe(false);

    const granting = new ToolHost({
      isolation: 'worker',
      ...hostPlaces('granting'),
      allowNetwork: { weather: ['api.weather.gov'] },
    });
    const everything = new ToolHost({
      isolation: 'worker',
      ...hostPlaces('everything'),
      allowNetwork: { weather: true },
    });
    try {
      expect((await granting.load(folder)).network).toEqual(['api.weather.gov']);
      expect((await everything.load(folder)).network).toEqual(['api.weather.gov', 'tiles.example.com']);
    } finally {
      await Promise.all([granting.close(), everything.close()]);
    }
  });

  it('of a module file names no package and asks for nothing', async () => {
    const file = join(root, 'alone.js');
    await writeFile(file, toolSource('alone', "'here'"));
    const report = await host.load(file);
    expect(report.kind).toBe('module');
    expect(report.packageName).toBeUndefined();
    expect(report.permissions).toEqual({ net: false });
    expect(basename(report.source)).toBe('alone.js');
  });
});
