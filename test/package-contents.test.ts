/**
 * The package as users get it: what `npm pack` puts in the tarball (the licence, the manual, the
 * compiled code and its types, no source maps pointing at sources the tarball lacks), and that it
 * loads the way the README says (ES modules; `require` on the Node lines that require them).
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO } from './support/cli-run.js';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const requiresEsm = major > 22 || (major === 22 && minor >= 12);

describe('the package', () => {
  it('ships its licence, its manual (README and every docs/ page it links to), the command and the compiled code with types, and no source maps', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: REPO,
    });
    const [packed] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/toolhost.js',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/src/tool-module.d.ts',
      ]),
    );
    // The messages name pages of the manual (docs/isolation.md, docs/troubleshooting.md): an installed
    // copy has them beside its README.
    const pages = readdirSync(join(REPO, 'docs')).map((page) => `docs/${page}`);
    expect(pages.length).toBeGreaterThan(10);
    expect(files).toEqual(expect.arrayContaining(pages));
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(
      files.filter(
        (file) =>
          !file.startsWith('dist/') &&
          !file.startsWith('docs/') &&
          !/^(LICENSE|README\.md|package\.json|bin\/toolhost\.js)$/.test(file),
      ),
    ).toEqual([]);
  });

  it.skipIf(!requiresEsm)('loads with require() on Node lines that require ES modules', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['-e', "const t = require('./dist/src/index.js'); console.log(typeof t.ToolHost, typeof t.runTools)"],
      { cwd: REPO },
    );
    expect(stdout).toBe('function function\n');
  });
});
