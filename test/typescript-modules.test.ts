/**
 * A tool module written in TypeScript (`.ts`): Node strips its types without a flag from 22.18 on
 * (23.6 on the 23 line), and toolhost then offers and calls it like any other; an older Node refuses
 * the file, and the reason it is left out says which Node versions load it and what to do instead.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL_TIERS } from './support/boundary.js';
import { freshDir, REPO, runCli } from './support/cli-run.js';

const MODULE = join(REPO, 'fixtures/modules/typescript-tool.ts');
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const stripsTypes = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);

let tmp: ReturnType<typeof freshDir>;
beforeEach(() => {
  tmp = freshDir('typescript-modules-tmp');
});
afterEach(() => {
  tmp.remove();
});

describe.each(ALL_TIERS)('isolation: %s, a .ts tool module', (isolation) => {
  it.skipIf(stripsTypes)('is left out on a Node that does not strip types, saying which do', async () => {
    const result = await runCli(['list', '--isolation', isolation, '--json', MODULE], { tmpDir: tmp.path });
    expect(result.code).toBe(1);
    const { sources } = JSON.parse(result.stdout) as {
      sources: { leftOut: { code: string; reason: string }[] }[];
    };
    expect(sources.flatMap((source) => source.leftOut)).toEqual([
      {
        module: MODULE,
        name: null,
        code: 'IMPORT_FAILED',
        reason: `typescript-tool.ts: Unknown file extension ".ts" for ${MODULE} (Node ${process.versions.node} does not load TypeScript; Node 22.18 or later (23.6 or later on the 23 line) strips the types of .ts modules without a flag: run toolhost on such a Node, or compile the module to JavaScript (tsc) and load the .js file)`,
      },
    ]);
  });

  it.runIf(stripsTypes)('is offered and called on a Node that strips types', async () => {
    const result = await runCli(['call', '--isolation', isolation, MODULE, 'greet_ts', '{"who":"types"}'], {
      tmpDir: tmp.path,
    });
    expect(result).toMatchObject({ code: 0, stdout: 'hello types\n' });
  });
});
