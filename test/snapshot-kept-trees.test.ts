/**
 * Large dependency trees kept in the store across runs (src/snapshot/kept-trees.ts): a later host
 * reuses the tree an earlier one built instead of linking thousands of files again; the tiers
 * that confine a package read it and can't write it; a dependency changed after load is not seen,
 * and one changed too recently to be known by its identity is never kept; the sweep leaves a tree
 * a living host holds and removes one nobody does.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost, type ToolHostOptions } from '../dist/src/index.js';
import { sandboxSupport } from '../dist/src/process/sandbox/sandbox.js';
import { sweepKeptTrees } from '../dist/src/snapshot/kept-trees.js';
import { REPO } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

/** The process tier runs in bubblewrap here (as it does on CI's Linux machines). */
const SANDBOXED = (await sandboxSupport()).available;

/** More files than a closure may hold and still be linked per host (KEPT_TREE_MIN_ENTRIES). */
const DEPENDENCY_FILES = 2100;
/** How long a file must have been left alone to be known by its identity (package-scan.ts). */
const SETTLE_MS = 2000;

let root: string;
let pkg: string;
let cache: string;
let keptTrees: string;

/** A package whose tools import `big-dep`, a dependency of 2,100 files. */
async function writeBigPackage(folder: string): Promise<void> {
  await mkdir(join(folder, 'tools'), { recursive: true });
  const tool = (name: string, body: string) =>
    `import { value, fail } from 'big-dep';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
export const name = ${JSON.stringify(name)};
export const description = 'test tool ${name}';
export const parameterSchema = { type: 'object' };
export function run() { ${body} }
`;
  await writeFile(join(folder, 'tools', 'value.js'), tool('dep_value', 'return value;'));
  await writeFile(join(folder, 'tools', 'fail.js'), tool('dep_fail', 'return fail();'));
  await writeFile(
    join(folder, 'tools', 'write.js'),
    tool(
      'dep_write',
      "writeFileSync(fileURLToPath(import.meta.resolve('big-dep')), 'export const value = 0;'); return 'written';",
    ),
  );
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({
      name: 'big',
      type: 'module',
      dependencies: { 'big-dep': '1.0.0' },
      toolhost: { tools: ['./tools/value.js', './tools/fail.js', './tools/write.js'] },
    }),
  );
  const dep = join(folder, 'node_modules', 'big-dep');
  await mkdir(join(dep, 'parts'), { recursive: true });
  await writeFile(
    join(dep, 'package.json'),
    JSON.stringify({ name: 'big-dep', type: 'module', main: 'index.js' }),
  );
  await writeDependencyIndex(dep, 'first');
  for (let start = 0; start < DEPENDENCY_FILES; start += 100)
    await Promise.all(
      Array.from({ length: 100 }, (_, offset) =>
        writeFile(join(dep, 'parts', `part-${start + offset}.js`), `export default ${start + offset};\n`),
      ),
    );
}

/** What the installed big-dep's `value` is now. */
let installedValue = '';

function writeDependencyIndex(dep: string, value: string): Promise<void> {
  if (dep === join(pkg, 'node_modules', 'big-dep')) installedValue = value;
  return writeFile(
    join(dep, 'index.js'),
    `export const value = ${JSON.stringify(value)};
export function fail() { throw new Error('failed in ' + import.meta.url); }
`,
  );
}

/** Waits until files written at `writtenAt` are known by their identity (the clock, not a handshake, decides). */
async function settledSince(writtenAt: number): Promise<void> {
  const left = writtenAt + SETTLE_MS + 100 - Date.now();
  if (left > 0) await delay(left);
}

beforeAll(async () => {
  root = await tempDir('toolhost-kept-trees-');
  pkg = join(root, 'big');
  cache = join(root, 'cache');
  keptTrees = join(cache, 'kept-trees');
  await mkdir(join(root, 'tmp'));
  await writeBigPackage(pkg);
  await settledSince(Date.now());
});

afterAll(async () => {
  await removeDir(root);
});

async function withHost<T>(options: ToolHostOptions, use: (host: ToolHost) => Promise<T>): Promise<T> {
  const host = new ToolHost({
    isolation: 'worker',
    tempRoot: join(root, 'tmp'),
    dataDir: join(root, 'data'),
    cacheDir: cache,
    logger: recordingLogger(),
    ...options,
  });
  try {
    await host.load(pkg);
    return await use(host);
  } finally {
    await host.close();
  }
}

/** The kept trees' folders (not their holder marks). */
async function keptTreeNames(): Promise<string[]> {
  return (await readdir(keptTrees).catch(() => [] as string[])).filter((name) => /^[0-9a-f]{64}$/.test(name));
}

describe('dependency trees kept in the store', () => {
  it('a second host reuses the tree the first kept, and neither leaves anything in its temp folder', async () => {
    const first = await withHost({}, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe('first');
      const failed = await host.call('dep_fail', {});
      expect(failed.isError).toBe(true);
      // The dependency's path is the package's own in what the model reads, not the store's.
      expect(outcomeText(failed)).toContain(join(pkg, 'node_modules', 'big-dep', 'index.js'));
      expect(outcomeText(failed)).not.toContain(cache);
      const [name] = await keptTreeNames();
      // Held while the host lives.
      expect(await readdir(join(keptTrees, `${name}.holders`))).toEqual([String(process.pid)]);
      return name;
    });
    expect(await keptTreeNames()).toEqual([first]);
    const file = join(keptTrees, first as string, 'node_modules', 'big-dep', 'parts', 'part-7.js');
    const before = await stat(file);
    await withHost({}, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe('first');
    });
    // The same tree, not one built again: its files are the same inodes.
    expect(await keptTreeNames()).toEqual([first]);
    expect((await stat(file)).ino).toBe(before.ino);
    expect(await readdir(join(keptTrees, `${first}.holders`))).toEqual([]);
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('two hosts of one process hold one tree: it stays held until the last of them closes', async () => {
    await withHost({}, async (first) => {
      const [name] = await keptTreeNames();
      const holders = join(keptTrees, `${name}.holders`);
      await withHost({}, async (second) => {
        expect(outcomeText(await second.call('dep_value', {}))).toBe(installedValue);
      });
      expect(await readdir(holders)).toEqual([String(process.pid)]);
      expect(outcomeText(await first.call('dep_value', {}))).toBe(installedValue);
      await first.close();
      expect(await readdir(holders)).toEqual([]);
    });
  });

  it('a kept tree replaced by a link (to a tree of other code) is not run: the host links a tree of its own', async () => {
    const [name] = await keptTreeNames();
    const forged = join(root, 'forged');
    await mkdir(join(forged, 'node_modules', 'big-dep'), { recursive: true });
    await writeFile(
      join(forged, 'node_modules', 'big-dep', 'package.json'),
      JSON.stringify({ name: 'big-dep', type: 'module', main: 'index.js' }),
    );
    await writeDependencyIndex(join(forged, 'node_modules', 'big-dep'), 'forged');
    const tree = join(keptTrees, name as string);
    await rm(tree, { recursive: true });
    await symlink(forged, tree);
    try {
      await withHost({}, async (host) => {
        expect(outcomeText(await host.call('dep_value', {}))).toBe('first');
      });
    } finally {
      await rm(tree);
    }
  });

  it("a store that can't be written: the host keeps the tree in its own folder, and leaves nothing", async () => {
    const blocker = join(root, 'a-file');
    await writeFile(blocker, '');
    const kept = await keptTreeNames();
    await withHost({ cacheDir: join(blocker, 'cache') }, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe('first');
    });
    expect(await keptTreeNames()).toEqual(kept);
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  const readsButCannotWrite = async (isolation: 'strict' | 'process') => {
    await withHost({ isolation }, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe('first');
      const written = await host.call('dep_write', {});
      expect(written.isError).toBe(true);
      // The next call still runs, and the tree is as it was.
      expect(outcomeText(await host.call('dep_value', {}))).toBe('first');
    });
  };

  it('the strict tier reads the kept tree and cannot write it', () => readsButCannotWrite('strict'));

  it.skipIf(!SANDBOXED)('the process tier in bubblewrap reads the kept tree and cannot write it', () =>
    readsButCannotWrite('process'),
  );

  it('a dependency changed after load is not seen; a fresh change is linked per host, never kept', async () => {
    const kept = await keptTreeNames();
    const dep = join(pkg, 'node_modules', 'big-dep');
    await withHost({}, async (host) => {
      await writeDependencyIndex(dep, 'second');
      expect(outcomeText(await host.call('dep_value', {}))).toBe('first');
    });
    // Too fresh to be known by its identity: a later host runs it, from a tree of its own.
    await withHost({}, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe('second');
      expect(await keptTreeNames()).toEqual(kept);
    });
    // Settled, it is kept beside the first.
    await settledSince(Date.now());
    await withHost({}, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe('second');
    });
    expect(await keptTreeNames()).toHaveLength(2);
  });

  it('a kept tree removed by hand under a host is built again when the package is loaded again', async () => {
    await withHost({}, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe(installedValue);
      for (const name of await keptTreeNames()) await rm(join(keptTrees, name), { recursive: true });
      await host.load(pkg);
      expect(await keptTreeNames()).toHaveLength(1);
      expect(outcomeText(await host.call('dep_value', {}))).toBe(installedValue);
    });
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('the sweep leaves a tree a living host holds, and removes the unused ones nobody holds', async () => {
    const names = await keptTreeNames();
    expect(names.length).toBeGreaterThan(0);
    const past = new Date(Date.now() - 60_000);
    await withHost({}, async () => {
      for (const name of names) await utimes(join(keptTrees, name), past, past);
      // A host that ended long ago (no such pid) holds one too: that counts for nothing.
      await writeFile(join(keptTrees, `${names[0]}.holders`, '999999999'), '');
      await sweepKeptTrees(keptTrees, 1000);
      // The one this host holds (touched when taken) stays; the other unused one goes.
      expect(await keptTreeNames()).toHaveLength(1);
    });
    const [left] = await keptTreeNames();
    await utimes(join(keptTrees, left as string), past, past);
    // The marks of a tree that is gone, left by a host that ended: they go too.
    const stray = join(keptTrees, `${'0'.repeat(64)}.holders`);
    await mkdir(stray);
    await writeFile(join(stray, '999999999'), '');
    await sweepKeptTrees(keptTrees, 1000);
    expect(await keptTreeNames()).toEqual([]);
    expect(await readdir(keptTrees)).toEqual([]);
    // With nothing kept, the next host builds the tree again and runs as before.
    await withHost({}, async (host) => {
      expect(outcomeText(await host.call('dep_value', {}))).toBe('second');
    });
    expect(await keptTreeNames()).toHaveLength(1);
  });
  it('two processes keeping the same tree at once both run the package, and one whole tree is kept', async () => {
    await rm(keptTrees, { recursive: true, force: true });
    const script = `
      const [index, cacheDir, tempRoot, dataDir, pkg] = process.argv.slice(1);
      const { ToolHost, outcomeText } = await import(index);
      const host = new ToolHost({ isolation: 'worker', cacheDir, tempRoot, dataDir });
      process.stdout.write('ready\\n');
      process.stdin.once('data', async () => {
        try {
          await host.load(pkg);
          process.stdout.write(outcomeText(await host.call('dep_value', {})) + '\\n');
        } finally {
          await host.close();
        }
      });
    `;
    const children = [0, 1].map(() => {
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          script,
          join(REPO, 'dist/src/index.js'),
          cache,
          join(root, 'tmp'),
          join(root, 'data'),
          pkg,
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      return {
        child,
        next: async () => (await lines.next()).value as string | undefined,
        exit: once(child, 'exit'),
      };
    });
    expect(await Promise.all(children.map(({ next }) => next()))).toEqual(['ready', 'ready']);
    for (const { child } of children) child.stdin.end('go\n');
    expect(await Promise.all(children.map(({ next }) => next()))).toEqual([installedValue, installedValue]);
    expect(await Promise.all(children.map(({ exit }) => exit))).toEqual([
      [0, null],
      [0, null],
    ]);
    const names = await readdir(keptTrees);
    expect(names.filter((name) => name.includes('.tmp-'))).toEqual([]);
    expect(await keptTreeNames()).toHaveLength(1);
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });
});
