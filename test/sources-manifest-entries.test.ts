/**
 * What a package's `toolhost.tools` list costs: one read per distinct module however many times and
 * however it is spelled, and a bounded number of entries, refused as a whole beyond the bound.
 */
import { readFileSync, symlinkSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { MAX_LISTED_MODULES } from '../dist/src/sources/resolve-path.js';
import { runCli } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir, toolSource } from './support/tool-packages.js';

let root: string;
let host: ToolHost;

beforeEach(async () => {
  root = await tempDir('toolhost-manifest-entries-');
  host = new ToolHost({ isolation: 'worker', dataDir: join(root, '.data'), logger: recordingLogger() });
});

afterEach(async () => {
  await host.close();
  await removeDir(root);
});

/** A package whose manifest lists `entries` as they are; its only module counts its reads in `counter`. */
async function packageListing(name: string, entries: string[], counter: string): Promise<string> {
  const folder = join(root, name);
  await mkdir(join(folder, 'tools'), { recursive: true });
  // Each evaluation of the module (one per declaration read) appends a line to the counter.
  const counted = `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(counter)}, 'read\\n');\n`;
  await writeFile(join(folder, 'tools', 'echo.js'), counted + toolSource('echo', "'echoed'"));
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({ name, type: 'module', toolhost: { tools: entries } }),
  );
  return folder;
}

const spellings = ['./tools/echo.js', 'tools/echo.js', './tools/../tools/echo.js', './linked.js'];

describe('a manifest that lists one module many times', () => {
  it('300 entries under four spellings (one through a symbolic link) are one module, read once', async () => {
    const counter = join(root, 'reads.log');
    const entries = Array.from({ length: 300 }, (_, index) => spellings[index % spellings.length] as string);
    const folder = await packageListing('repeats', entries, counter);
    symlinkSync('tools/echo.js', join(folder, 'linked.js'));

    const report = await host.load(folder);

    expect(report.modules.map((module) => [module.name, module.state])).toEqual([['echo', 'offered']]);
    expect(host.status().filter((status) => status.source === report.source)).toHaveLength(1);
    expect(host.status().some((status) => status.code === 'NAME_TAKEN')).toBe(false);
    expect(readFileSync(counter, 'utf8')).toBe('read\n');
    const outcome = await host.call('echo', {});
    expect(outcome.isError).toBe(false);
  });
});

describe('a manifest that lists more entries than one package may', () => {
  const tooMany = () => Array.from({ length: MAX_LISTED_MODULES + 1 }, (_, index) => `./tools/t${index}.js`);

  it('is refused as a whole, naming the manifest, the count and the bound, and nothing of it is read', async () => {
    const counter = join(root, 'reads.log');
    const folder = await packageListing(
      'too-many',
      ['./tools/echo.js', 'tools/echo.js', ...tooMany()],
      counter,
    );

    await expect(host.load(folder)).rejects.toMatchObject({
      code: 'NOT_A_PACKAGE',
      message: `Not a tool package: ${join(folder, 'package.json')} lists ${MAX_LISTED_MODULES + 2} different paths under "toolhost": { "tools" }, more than the ${MAX_LISTED_MODULES} one package may list`,
    });
    expect(() => readFileSync(counter, 'utf8')).toThrow(/ENOENT/);

    // The host is fine, and so is another package.
    const good = await packageListing('good', ['./tools/echo.js'], join(root, 'good.log'));
    await host.load(good);
    expect((await host.call('echo', {})).isError).toBe(false);
  });

  it('is a usage error of the command: one line on stderr, exit 2', async () => {
    const folder = await packageListing('too-many', tooMany(), join(root, 'reads.log'));
    const result = await runCli(['list', folder], { tmpDir: root, cwd: root });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`more than the ${MAX_LISTED_MODULES} one package may list`);
  });
});
