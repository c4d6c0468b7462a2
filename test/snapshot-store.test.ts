/**
 * The snapshot store kept across runs: two processes filling it at once both get whole copies; a
 * store removed while a host uses it only means copying again; a store over its bound loses what
 * was least recently used; a later host links what an earlier one copied.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost, type ToolHostOptions } from '../dist/src/index.js';
import { REPO } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';
import { installFromRepo } from './support/package-files.js';
import { removeDir, tempDir, toolSource, writePackage } from './support/tool-packages.js';

let root: string;
let cache: string;
const hosts: ToolHost[] = [];

beforeEach(async () => {
  root = await tempDir('toolhost-store-');
  cache = join(root, 'cache');
  await mkdir(join(root, 'tmp'));
});

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
  await removeDir(root);
});

function makeHost(options: ToolHostOptions = {}): ToolHost {
  const host = new ToolHost({
    isolation: 'worker',
    tempRoot: join(root, 'tmp'),
    dataDir: join(root, 'data'),
    cacheDir: cache,
    logger: recordingLogger(),
    ...options,
  });
  hosts.push(host);
  return host;
}

async function dependentPackage(name = 'dependent'): Promise<string> {
  const pkg = join(root, name);
  await cp(join(REPO, 'fixtures/snapshots/dependent'), pkg, { recursive: true });
  await installFromRepo(pkg, ['debug', 'ms']);
  return pkg;
}

/** Every copy in the store: its name, and whether its bytes hash to that name. */
async function storeCopies(): Promise<Array<{ name: string; whole: boolean }>> {
  const files = join(cache, 'files');
  const copies: Array<{ name: string; whole: boolean }> = [];
  for (const bucket of await readdir(files).catch(() => [] as string[])) {
    for (const name of await readdir(join(files, bucket))) {
      const bytes = await readFile(join(files, bucket, name));
      copies.push({ name, whole: createHash('sha256').update(bytes).digest('hex') === name });
    }
  }
  return copies.sort((a, b) => (a.name < b.name ? -1 : 1));
}

describe('the snapshot store', () => {
  it('two processes filling the same store at once both run the package, and every copy is whole', async () => {
    const pkg = await dependentPackage();
    const start = () => {
      const child = spawn(
        process.execPath,
        [
          join(REPO, 'fixtures/snapshots/fill-store.mjs'),
          join(REPO, 'dist/src/index.js'),
          cache,
          join(root, 'tmp'),
          pkg,
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      // Lines as they come, each handed to the next waiter (or kept until one asks).
      const arrived: string[] = [];
      const waiting: Array<(line: string | undefined) => void> = [];
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        const waiter = waiting.shift();
        if (waiter === undefined) arrived.push(line);
        else waiter(line);
      });
      lines.on('close', () => {
        for (const waiter of waiting.splice(0)) waiter(undefined);
      });
      const next = () =>
        new Promise<string | undefined>((resolve) => {
          const line = arrived.shift();
          if (line === undefined) waiting.push(resolve);
          else resolve(line);
        });
      const exit = once(child, 'exit');
      return { child, next, exit };
    };
    const children = [start(), start()];
    expect(await Promise.all(children.map(({ next }) => next()))).toEqual(['ready', 'ready']);
    for (const { child } of children) child.stdin.end('go\n');
    const answers = await Promise.all(children.map(({ next }) => next()));
    const exits = await Promise.all(children.map(({ exit }) => exit));
    expect(exits).toEqual([
      [0, null],
      [0, null],
    ]);
    for (const answer of answers)
      expect(JSON.parse(answer as string)).toEqual({ states: ['offered'], answer: 'debug function, 2h' });
    const copies = await storeCopies();
    expect(copies.length).toBeGreaterThan(0);
    expect(copies.filter((copy) => !copy.whole || copy.name.startsWith('.tmp-'))).toEqual([]);
  });

  it('a later host links the copies an earlier one made, and reads no installed file to do it', async () => {
    const pkg = await dependentPackage();
    const first = makeHost();
    await first.load(pkg);
    await first.close();
    const copies = await storeCopies();

    const second = makeHost();
    await second.load(pkg);
    const outcome = await second.call('uses_dependencies', {});
    expect(outcomeText(outcome)).toBe('debug function, 2h');
    expect(await storeCopies()).toEqual(copies);
    // The snapshot's copy of the dependency is the store's inode, not the installed file's.
    const installed = await readFile(join(pkg, 'node_modules', 'ms', 'index.js'));
    const hash = createHash('sha256').update(installed).digest('hex');
    const stored = await stat(join(cache, 'files', hash.slice(0, 2), hash));
    expect(stored.nlink).toBeGreaterThan(1);
    expect((await stat(join(pkg, 'node_modules', 'ms', 'index.js'))).nlink).toBe(1);
  });

  it('a store removed while a host uses it only means copying again: loads, calls and another package are fine', async () => {
    const pkg = await dependentPackage();
    const other = await writePackage(join(root, 'other'), {
      'other.js': toolSource('other_tool', "'other fine'"),
    });
    const host = makeHost();
    await host.load(pkg);
    await rm(cache, { recursive: true, force: true, maxRetries: 20 });
    expect(outcomeText(await host.call('uses_dependencies', {}))).toBe('debug function, 2h');
    // Removed again while new versions are being copied into it, in whichever order that lands.
    for (let round = 1; round <= 4; round++) {
      await writeFile(join(pkg, 'tools', 'round.js'), `export const round = ${round};\n`);
      const [report] = await Promise.all([
        host.load(pkg),
        rm(cache, { recursive: true, force: true, maxRetries: 20 }),
      ]);
      expect(report.modules.map((module) => module.state)).toEqual(['offered']);
      expect(outcomeText(await host.call('uses_dependencies', {}))).toBe('debug function, 2h');
    }
    await host.load(other);
    expect(outcomeText(await host.call('other_tool', {}))).toBe('other fine');
    expect((await storeCopies()).filter((copy) => !copy.whole)).toEqual([]);
  });

  it('a store over its bound loses what was least recently used first', async () => {
    // Two packages each holding a dependency of about 700 KB, under a bound of 1 MB.
    const packages: string[] = [];
    for (const name of ['older', 'newer']) {
      const pkg = await writePackage(join(root, name), {
        'big.js': `import { size } from 'big-dep';\n${toolSource(`${name}_tool`, 'String(size)')}`,
      });
      const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8'));
      await writeFile(
        join(pkg, 'package.json'),
        JSON.stringify({ ...manifest, dependencies: { 'big-dep': '1' } }),
      );
      const dep = join(pkg, 'node_modules', 'big-dep');
      await mkdir(dep, { recursive: true });
      await writeFile(
        join(dep, 'package.json'),
        JSON.stringify({ name: 'big-dep', type: 'module', main: 'index.js' }),
      );
      await writeFile(
        join(dep, 'index.js'),
        `export const size = ${JSON.stringify(name)};\n// ${name.repeat(Math.ceil(700_000 / name.length))}\n`,
      );
      packages.push(pkg);
    }
    const hashOf = async (pkg: string) =>
      createHash('sha256')
        .update(await readFile(join(pkg, 'node_modules', 'big-dep', 'index.js')))
        .digest('hex');
    const [older, newer] = packages as [string, string];
    for (const pkg of [older, newer]) {
      const host = makeHost({ cacheMaxMb: 1 });
      await host.load(pkg);
      // Closing waits for the prune the load started.
      await host.close();
    }
    const names = (await storeCopies()).map((copy) => copy.name);
    expect(names).not.toContain(await hashOf(older));
    expect(names).toContain(await hashOf(newer));

    // The pruned package still loads: its file is copied again.
    const host = makeHost({ cacheMaxMb: 1 });
    await host.load(older);
    expect(outcomeText(await host.call('older_tool', {}))).toBe('older');
  });

  it('a cache folder that cannot be made (its path runs through a file) gives the host a store of its own', async () => {
    const pkg = await dependentPackage();
    await writeFile(join(root, 'a-file'), 'not a folder\n');
    const host = makeHost({ cacheDir: join(root, 'a-file', 'cache') });
    const report = await host.load(pkg);
    expect(report.modules.map((module) => module.state)).toEqual(['offered']);
    expect(outcomeText(await host.call('uses_dependencies', {}))).toBe('debug function, 2h');
    await host.close();
    expect(await readFile(join(root, 'a-file'), 'utf8')).toBe('not a folder\n');
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('refuses a cache option that is not one, in one line', () => {
    expect(() => makeHost({ cacheMaxMb: 0 })).toThrow(
      'Expected `cacheMaxMb` to be a positive integer, got 0',
    );
    expect(() => makeHost({ cacheDir: '' })).toThrow('Expected `cacheDir` to be a non-empty string, got');
  });
});
