/**
 * Links in a snapshot, against the tiers that confine a tool to it with Node's permission model.
 * The permission model reads the `..` of a path as text; the system follows links and climbs from
 * where they led. For any package whose snapshot names no unconfined link, every path inside the
 * snapshot as text stays inside it on disk (walked with the system's own `realpath`, up to a depth).
 * A link that would break that is named; strict-links.test.ts shows such a package left out.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { isWithin } from '../dist/src/shared/paths.js';
import type { Snapshot } from '../dist/src/snapshot/layout.js';
import { type UnconfinedLink, UnconfinedSnapshotError } from '../dist/src/snapshot/links.js';
import { Snapshots } from '../dist/src/snapshot/snapshot.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource, writePackage } from './support/tool-packages.js';

const FOLDERS = ['', 'a', 'a/b', 'c'];
const SEGMENTS = ['..', '.', 'a', 'b', 'c', 'f.txt'];
/** How deep below what it may read a path as text goes in {@link firstWayOut}. */
const MAX_TEXT_DEPTH = 12;

let root: string;
let snapshots: Snapshots;
let packages = 0;

beforeEach(async () => {
  root = await tempDir('toolhost-snapshot-links-');
  snapshots = new Snapshots(join(root, 'snapshots'), {
    folder: join(root, 'store'),
    maxBytes: 64 * 1024 * 1024,
  });
});

afterEach(async () => {
  await snapshots.close();
  await removeDir(root);
});

interface LinkPlan {
  at: string;
  target: string[];
  absolute: boolean;
}

/** A package of FOLDERS, each with a file `f.txt`, and the links planned (`l0`, `l1`, … in order). */
async function packageWith(links: readonly LinkPlan[]): Promise<string> {
  const pkg = join(root, `pkg-${++packages}`);
  for (const folder of FOLDERS) {
    await mkdir(join(pkg, folder), { recursive: true });
    await writeFile(join(pkg, folder, 'f.txt'), folder);
  }
  for (const [index, link] of links.entries()) {
    const target = link.absolute ? resolve(pkg, link.at, ...link.target) : link.target.join('/');
    await symlink(target, join(pkg, link.at, `l${index}`));
  }
  return realpath(pkg);
}

/**
 * Every path a tool could ask for that stays inside `grant` as text, up to {@link MAX_TEXT_DEPTH}
 * levels below it, walked part by part as the system walks it: a name goes down (through a link, to
 * where it leads), a `..` goes up from where the system is, and the text one level up; past a file
 * nothing goes on. A path is
 * known by how deep its text is and where the system is, so each is walked once. The first place
 * outside `grant` the system reaches, with the path that reaches it; undefined if there is none.
 */
function firstWayOut(start: string, grant: string): string | undefined {
  const startDepth = relative(grant, start).split(sep).length;
  const seen = new Set<string>();
  const pending: Array<{ depth: number; at: string; path: string }> = [
    { depth: startDepth, at: realpathSync(start), path: '' },
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { depth, at, path } = next;
    const key = `${depth}\0${at}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (!isWithin(grant, at)) return `${path} leads to ${at}`;
    // Past a file the system goes nowhere, not even up (ENOTDIR).
    if (!statSync(at).isDirectory()) continue;
    if (depth > 0) pending.push({ depth: depth - 1, at: dirname(at), path: `${path}/..` });
    if (depth >= MAX_TEXT_DEPTH) continue;
    for (const name of readdirSync(at)) {
      const found = tryRealpath(join(at, name));
      if (found !== undefined) pending.push({ depth: depth + 1, at: found, path: `${path}/${name}` });
    }
  }
  return undefined;
}

function tryRealpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The snapshot of `pkg` for a tool it must confine, or the link it was refused for. */
async function takeConfined(pkg: string): Promise<{ snapshot?: Snapshot; unconfined?: UnconfinedLink }> {
  try {
    return { snapshot: await snapshots.take(pkg, 'package', true) };
  } catch (error) {
    if (error instanceof UnconfinedSnapshotError) return { unconfined: error.unconfined };
    throw error;
  }
}

/** Every version folder the snapshots hold now (`snapshots/<package>/nm-…/v-…`). */
async function versionFolders(): Promise<string[]> {
  const folders: string[] = [];
  const base = join(root, 'snapshots');
  for (const domain of await readdir(base).catch(() => []))
    for (const tree of await readdir(join(base, domain)).catch(() => []))
      for (const version of await readdir(join(base, domain, tree)).catch(() => []))
        if (version.startsWith('v-')) folders.push(join(domain, tree, version));
  return folders.sort();
}

/** Where the system finds `path` (given as text, never normalized first), or undefined if nowhere. */
async function onDisk(path: string): Promise<string | undefined> {
  return realpath(path).catch(() => undefined);
}

describe('links in a snapshot', () => {
  it('with no unconfined link named, no path inside the snapshot as text leads outside it on disk', async () => {
    const link = fc.record({
      at: fc.constantFrom(...FOLDERS),
      target: fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }),
      absolute: fc.boolean(),
    });
    let confined = 0;
    let named = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(link, { maxLength: 3 }), async (links) => {
        const taken = await takeConfined(await packageWith(links));
        if (taken.snapshot === undefined) {
          named += 1;
          return;
        }
        confined += 1;
        try {
          expect(firstWayOut(taken.snapshot.folder, taken.snapshot.grant)).toBeUndefined();
        } finally {
          snapshots.release(taken.snapshot);
        }
      }),
      { numRuns: 80 },
    );
    // Both sides were tried.
    expect(confined).toBeGreaterThan(0);
    expect(named).toBeGreaterThan(0);
  });

  it('a link to a folder above itself is named, nothing is made for it, and in a copy made anyway a path through it leads out on disk', async () => {
    const pkg = await packageWith([{ at: 'a/b', target: ['..'], absolute: false }]);
    const made = await versionFolders();
    expect(await takeConfined(pkg)).toEqual({
      unconfined: { link: join(pkg, 'a', 'b', 'l0'), target: join(pkg, 'a'), why: 'above' },
    });
    expect(await versionFolders()).toEqual(made);
    // The worker tier's snapshot, which confines nothing.
    const snapshot = await snapshots.take(pkg, 'package');
    // Inside the snapshot as text (its `a/f.txt`); on disk, four folders above what it may read.
    const climb = `${snapshot.folder}/a/b/l0/b/l0/b/l0/../../../../../../f.txt`;
    expect(isWithin(snapshot.grant, resolve(climb))).toBe(true);
    const found = await onDisk(climb.replace(/f\.txt$/, ''));
    expect(found).toBeDefined();
    expect(isWithin(snapshot.grant, found ?? '')).toBe(false);
    snapshots.release(snapshot);
  });

  it('links to files above them, and to folders beside or below them, are not named', async () => {
    const pkg = await packageWith([
      { at: 'a/b', target: ['..', 'f.txt'], absolute: false },
      { at: 'c', target: ['..', 'a', 'b'], absolute: false },
      { at: '', target: ['a', 'b'], absolute: true },
    ]);
    const { snapshot } = await takeConfined(pkg);
    if (snapshot === undefined) throw new Error('the package was refused');
    expect(await onDisk(`${snapshot.folder}/a/b/l0`)).toBe(join(snapshot.folder, 'a', 'f.txt'));
    expect(await onDisk(`${snapshot.folder}/c/l1`)).toBe(join(snapshot.folder, 'a', 'b'));
    expect(await onDisk(`${snapshot.folder}/l2`)).toBe(join(snapshot.folder, 'a', 'b'));
    snapshots.release(snapshot);
  });

  it('a link to the folder it stands in is copied as a link to `.` (the copy used to fail), and named', async () => {
    const pkg = await packageWith([{ at: 'a', target: ['.'], absolute: false }]);
    const snapshot = await snapshots.take(pkg, 'package');
    expect(await onDisk(`${snapshot.folder}/a/l0`)).toBe(join(snapshot.folder, 'a'));
    snapshots.release(snapshot);
    expect(await takeConfined(pkg)).toMatchObject({
      unconfined: { link: join(pkg, 'a', 'l0'), why: 'above' },
    });
  });

  it('a link to a folder above itself inside a dependency the tools can import is named, as among the own files', async () => {
    const pkg = await packageWith([]);
    const dependency = join(pkg, 'node_modules', 'd');
    await mkdir(join(dependency, 'lib'), { recursive: true });
    await writeFile(join(dependency, 'package.json'), JSON.stringify({ name: 'd' }));
    await symlink('..', join(dependency, 'lib', 'up'));
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'p', dependencies: { d: '*' } }));
    expect(await takeConfined(pkg)).toEqual({
      unconfined: { link: join(dependency, 'lib', 'up'), target: dependency, why: 'above' },
    });
  });

  it('a node_modules that is itself a link out of the package is named, and nothing of it is copied', async () => {
    const pkg = await packageWith([]);
    const elsewhere = join(root, 'elsewhere');
    await mkdir(join(elsewhere, 'gh'), { recursive: true });
    await writeFile(join(elsewhere, 'gh', 'hosts.yml'), 'oauth_token: not-the-package-s');
    await symlink(elsewhere, join(pkg, 'node_modules'));
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'p', dependencies: { gh: '*' } }));
    expect(await takeConfined(pkg)).toEqual({
      unconfined: { link: join(pkg, 'node_modules'), target: elsewhere, why: 'out' },
    });
    const snapshot = await snapshots.take(pkg, 'package');
    expect(await onDisk(join(snapshot.grant, 'node_modules', 'gh'))).toBeUndefined();
    snapshots.release(snapshot);
  });

  it('a workspace link to a folder of the package that is itself a link out (.git) is named, and nothing behind it is copied', async () => {
    const pkg = await packageWith([]);
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'hosts.yml'), 'oauth_token: not-the-package-s');
    await symlink(elsewhere, join(pkg, '.git'));
    await mkdir(join(pkg, 'node_modules'));
    await symlink('../.git', join(pkg, 'node_modules', 'w'));
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'p', dependencies: { w: '*' } }));
    expect(await takeConfined(pkg)).toEqual({
      unconfined: { link: join(pkg, 'node_modules', 'w'), target: join(pkg, '.git'), why: 'out' },
    });
    const snapshot = await snapshots.take(pkg, 'package');
    // Kept as a link to the original (the worker tier reads what the user can), not copied in.
    expect(await onDisk(join(snapshot.grant, 'node_modules', 'w'))).toBe(elsewhere);
    snapshots.release(snapshot);
  });

  it('a package installed by pnpm (links into node_modules/.pnpm, siblings linked there) loads and imports under strict', async () => {
    const pkg = join(root, 'pnpm-package');
    const store = join(pkg, 'node_modules', '.pnpm');
    const installed = async (folder: string, name: string, body: string, dependencies = {}) => {
      await mkdir(folder, { recursive: true });
      const manifest = { name, type: 'module', main: 'index.js', dependencies };
      await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
      await writeFile(join(folder, 'index.js'), body);
    };
    await installed(
      join(store, 'outer@1', 'node_modules', 'outer'),
      'outer',
      "import inner from 'inner';\nexport default 'outer+' + inner;\n",
      { inner: '1' },
    );
    await installed(join(store, 'inner@1', 'node_modules', 'inner'), 'inner', "export default 'inner';\n");
    await symlink('../../inner@1/node_modules/inner', join(store, 'outer@1', 'node_modules', 'inner'));
    await mkdir(join(store, 'node_modules'));
    await symlink('../inner@1/node_modules/inner', join(store, 'node_modules', 'inner'));
    await symlink('.pnpm/outer@1/node_modules/outer', join(pkg, 'node_modules', 'outer'));
    await mkdir(join(pkg, 'node_modules', '.bin'));
    await symlink('../outer/index.js', join(pkg, 'node_modules', '.bin', 'outer'));
    await writePackage(pkg, {
      'uses-outer.js': toolSource('uses_outer', 'outer', "import outer from 'outer';"),
    });
    const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8'));
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ ...manifest, dependencies: { outer: '1' } }));
    const host = new ToolHost({
      dataDir: join(root, 'data'),
      tempRoot: root,
      cacheDir: join(root, 'cache'),
      isolation: 'strict',
      logger: recordingLogger(),
    });
    try {
      const report = await host.load(pkg);
      expect(report.modules.map((module) => module.state)).toEqual(['offered']);
      expect(outcomeText(await host.call('uses_outer', {}))).toBe('outer+inner');
    } finally {
      await host.close();
    }
  });
});
