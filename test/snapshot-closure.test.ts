/**
 * What a snapshot's node_modules holds: the closure of the package's dependencies and optional
 * dependencies (and their dependencies and peers), found as Node finds them: nested copies first,
 * hoisted ones above, scoped names, links inside node_modules kept (pnpm's layout), a link to a
 * workspace folder of the package copied as its folder, a link out of the package kept as a link
 * and never followed. devDependencies, undeclared packages and names that climb out are not
 * copied; a missing dependency fails only at import. (Strict refuses a package holding a link out
 * of it before any snapshot, so the tiers here are worker and process.)
 */
import { lstat, mkdir, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

/** A package folder at `folder` whose index.js exports `value` (an expression) and imports `imports`. */
async function installed(folder: string, manifest: object, value: string, imports: string[] = []) {
  await mkdir(folder, { recursive: true });
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ type: 'module', main: 'index.js', ...manifest }),
  );
  const lines = imports.map((name, index) => `import d${index} from ${JSON.stringify(name)};`);
  await writeFile(join(folder, 'index.js'), `${lines.join('\n')}\nexport default ${value};\n`);
}

let root: string;
let pkg: string;

beforeAll(async () => {
  root = await tempDir('toolhost-closure-');
  pkg = join(root, 'pkg');
  const nm = join(pkg, 'node_modules');
  await mkdir(join(pkg, 'tools'), { recursive: true });
  await writeFile(
    join(pkg, 'package.json'),
    JSON.stringify({
      name: 'pkg',
      type: 'module',
      toolhost: { tools: ['./tools/imports.js'] },
      dependencies: {
        a: '1',
        '@scope/b': '1',
        pnpmed: '1',
        linked: '1',
        outside: '1',
        absent: '1',
        '../../escape': '1',
      },
      optionalDependencies: { opt: '1' },
      devDependencies: { dev: '1' },
    }),
  );
  // a needs c@2, nested under it; c@1 is hoisted but nothing declared needs it.
  await installed(join(nm, 'a'), { name: 'a', dependencies: { c: '2' } }, "'a+' + d0", ['c']);
  await installed(join(nm, 'a', 'node_modules', 'c'), { name: 'c' }, "'c2'");
  await installed(join(nm, 'c'), { name: 'c' }, "'c1'");
  // @scope/b needs d, hoisted to the top; d has e as a peer.
  await installed(join(nm, '@scope', 'b'), { name: '@scope/b', dependencies: { d: '1' } }, "'b+' + d0", [
    'd',
  ]);
  await installed(join(nm, 'd'), { name: 'd', peerDependencies: { e: '1' } }, "'d+' + d0", ['e']);
  await installed(join(nm, 'e'), { name: 'e' }, "'e'");
  await installed(join(nm, 'opt'), { name: 'opt' }, "'opt'");
  await installed(join(nm, 'dev'), { name: 'dev' }, "'dev'");
  await installed(join(nm, 'undeclared'), { name: 'undeclared' }, "'undeclared'");
  // pnpm: node_modules/pnpmed -> .pnpm/pnpmed@1/node_modules/pnpmed, whose dependency is a sibling link.
  const store = join(nm, '.pnpm');
  await installed(
    join(store, 'pnpmed@1', 'node_modules', 'pnpmed'),
    { name: 'pnpmed', dependencies: { inner: '1' } },
    "'pnpmed+' + d0",
    ['inner'],
  );
  await installed(join(store, 'inner@1', 'node_modules', 'inner'), { name: 'inner' }, "'inner'");
  await symlink('../../inner@1/node_modules/inner', join(store, 'pnpmed@1', 'node_modules', 'inner'));
  await symlink('.pnpm/pnpmed@1/node_modules/pnpmed', join(nm, 'pnpmed'));
  // A workspace: a folder of the package, linked into its node_modules.
  await installed(join(pkg, 'packages', 'linked'), { name: 'linked' }, "'linked'");
  await symlink('../packages/linked', join(nm, 'linked'));
  // npm link to a folder outside the package, holding what the package has no business shipping.
  await installed(join(root, 'elsewhere', 'outside'), { name: 'outside' }, "'outside'");
  await writeFile(join(root, 'elsewhere', 'outside', 'secret.txt'), "not the package's\n");
  await symlink(join(root, 'elsewhere', 'outside'), join(nm, 'outside'));

  await writeFile(
    join(pkg, 'tools', 'imports.js'),
    `const tryImport = (name) => import(name).then((m) => m.default, () => 'missing');
export const name = 'imports';
export const description = 'imports every dependency and says what each gave';
export const parameterSchema = { type: 'object' };
export async function run() {
  const names = ['a', '@scope/b', 'pnpmed', 'linked', 'opt', 'absent', 'dev', 'undeclared', 'c'];
  const got = {};
  for (const name of names) got[name] = await tryImport(name);
  return JSON.stringify(got);
}
`,
  );
});

afterAll(async () => {
  await removeDir(root);
});

describe.each(['worker', 'process'] as const)('the dependency closure (%s tier)', (isolation) => {
  it('imports what the package depends on, resolved as Node resolves it, and nothing else', async () => {
    const tmp = join(root, `tmp-${isolation}`);
    await mkdir(tmp);
    const host = new ToolHost({
      isolation,
      tempRoot: tmp,
      dataDir: join(root, 'data'),
      cacheDir: join(root, 'cache'),
      logger: recordingLogger(),
    });
    try {
      const report = await host.load(pkg);
      expect(report.modules.map((module) => module.state)).toEqual(['offered']);
      const outcome = await host.call('imports', {});
      expect(outcome.isError).toBe(false);
      expect(JSON.parse(outcomeText(outcome))).toEqual({
        a: 'a+c2',
        '@scope/b': 'b+d+e',
        pnpmed: 'pnpmed+inner',
        linked: 'linked',
        opt: 'opt',
        absent: 'missing',
        dev: 'missing',
        undeclared: 'missing',
        c: 'missing',
      });
      const [hostFolder] = await readdir(tmp);
      const snapshots = join(tmp, hostFolder as string, 'snapshots');
      const [domain] = await readdir(snapshots);
      const [tree] = (await readdir(join(snapshots, domain as string))).filter((name) =>
        name.startsWith('nm-'),
      );
      const top = await readdir(join(snapshots, domain as string, tree as string, 'node_modules'));
      expect(top.sort()).toEqual([
        '.pnpm',
        '@scope',
        'a',
        'd',
        'e',
        'linked',
        'opt',
        'outside',
        'pnpmed',
        'toolhost',
      ]);
      const modules = join(snapshots, domain as string, tree as string, 'node_modules');
      expect((await lstat(join(modules, 'linked'))).isDirectory()).toBe(true);
      expect((await lstat(join(modules, 'outside'))).isSymbolicLink()).toBe(true);
      expect(await readlink(join(modules, 'outside'))).toBe(join(root, 'elsewhere', 'outside'));
      // The next call is fine too.
      expect(outcomeText(await host.call('imports', {}))).toContain('"a":"a+c2"');
    } finally {
      await host.close();
    }
  });
});
