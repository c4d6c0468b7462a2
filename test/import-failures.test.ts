/**
 * A package whose module imports a library that is installed beside it but not copied into its
 * snapshot (only the closure of "dependencies" and "optionalDependencies" is): the reason it is
 * left out names the library, the package, and the field to move it to, in every tier.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL_TIERS } from './support/boundary.js';
import { freshDir, PACKAGES, runCli } from './support/cli-run.js';

const FIXTURE = join(PACKAGES, 'dev-only-dependency');
const COPIED =
  'only the packages in "dependencies" and "optionalDependencies", and what they depend on, are copied into the snapshot a package runs from';

let tmp: ReturnType<typeof freshDir>;
beforeEach(() => {
  tmp = freshDir('import-failures-tmp');
});
afterEach(() => {
  tmp.remove();
});

describe.each(ALL_TIERS)('isolation: %s, a library the snapshot does not hold', (isolation) => {
  it('is named with its package and the field to list it in: a devDependency, and one listed nowhere', async () => {
    const result = await runCli(['list', '--isolation', isolation, '--json', FIXTURE], { tmpDir: tmp.path });
    expect(result.code).toBe(1);
    const { sources } = JSON.parse(result.stdout) as {
      sources: { leftOut: { module: string; code: string; reason: string }[] }[];
    };
    const reasons = sources
      .flatMap((source) => source.leftOut)
      .map((left) => [left.module, left.code, left.reason]);
    expect(reasons).toEqual([
      [
        join(FIXTURE, 'tools/front-matter.js'),
        'IMPORT_FAILED',
        `tools/front-matter.js: Cannot find package 'tiny-yaml' imported from ${join(FIXTURE, 'tools/front-matter.js')} (tiny-yaml is in the devDependencies of dev-only-dependency: ${COPIED}; move tiny-yaml to "dependencies" in its package.json)`,
      ],
      [
        join(FIXTURE, 'tools/slug.js'),
        'IMPORT_FAILED',
        `tools/slug.js: Cannot find package 'tiny-slug' imported from ${join(FIXTURE, 'tools/slug.js')} (tiny-slug is in dev-only-dependency's node_modules but not in its "dependencies": ${COPIED}; add tiny-slug to "dependencies" in its package.json)`,
      ],
    ]);
  });
});
