/**
 * A link out of a package under a lock: the worker tier runs what a link out of the package leads
 * to (an `npm link`ed dependency, an own file linked from elsewhere) from the original, and the
 * content digest counts only the link's text. So a lock can't pin such a package: `pin` records no
 * entry for it and says why, and a host under a lock withholds it with a reason naming the link,
 * before and after the code behind the link changes.
 */
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { freshDir, runCli, writePackage } from './support/cli-run.js';
import { recordingLogger } from './support/host-harness.js';

const USES_DEPENDENCY = `import { answer } from 'linked-dep';
export const name = 'linked';
export const description = 'answers what its linked dependency says';
export const parameterSchema = { type: 'object' };
export function run() { return answer; }
`;

const USES_HELPER = `import { answer } from './helper.js';
export const name = 'helped';
export const description = 'answers what its linked helper says';
export const parameterSchema = { type: 'object' };
export function run() { return answer; }
`;

const PLAIN = `export const name = 'plain';
export const description = 'a tool with nothing linked';
export const parameterSchema = { type: 'object' };
export function run() { return 'plain'; }
`;

const dependency = (answer: string) => `export const answer = ${JSON.stringify(answer)};\n`;

describe('a package holding a link out of it, under a lock', () => {
  const tmp = freshDir('toolhost-lock-links');
  const lockFile = join(tmp.path, 'toolhost.lock.json');
  const outside = join(tmp.path, 'outside');
  let linkedPackage: string;
  let helperPackage: string;
  let plainPackage: string;
  let dependencyLink: string;
  let helperLink: string;

  beforeAll(() => {
    // The dependency lives outside the package, as `npm link` leaves it.
    mkdirSync(join(outside, 'linked-dep'), { recursive: true });
    writeFileSync(
      join(outside, 'linked-dep', 'package.json'),
      JSON.stringify({ name: 'linked-dep', type: 'module', exports: './index.js' }),
    );
    writeFileSync(join(outside, 'linked-dep', 'index.js'), dependency('v1'));
    writeFileSync(join(outside, 'helper.js'), dependency('helper v1'));

    linkedPackage = realpathSync(writePackage(tmp.path, 'linked-tools', { 'linked.js': USES_DEPENDENCY }));
    const manifest = JSON.parse(readFileSync(join(linkedPackage, 'package.json'), 'utf8'));
    writeFileSync(
      join(linkedPackage, 'package.json'),
      JSON.stringify({ ...manifest, dependencies: { 'linked-dep': '1.0.0' } }),
    );
    mkdirSync(join(linkedPackage, 'node_modules'));
    dependencyLink = join(linkedPackage, 'node_modules', 'linked-dep');
    symlinkSync(join(outside, 'linked-dep'), dependencyLink);

    helperPackage = realpathSync(writePackage(tmp.path, 'helped-tools', { 'helped.js': USES_HELPER }));
    helperLink = join(helperPackage, 'tools', 'helper.js');
    symlinkSync(join(outside, 'helper.js'), helperLink);

    plainPackage = realpathSync(writePackage(tmp.path, 'plain-tools', { 'plain.js': PLAIN }));
  });
  afterAll(() => tmp.remove());

  const newHost = (lock?: string) =>
    new ToolHost({
      isolation: 'worker',
      logger: recordingLogger(),
      dataDir: join(tmp.path, 'data'),
      ...(lock === undefined ? {} : { lockFile: lock }),
    });

  it('runs without a lock (the worker tier keeps the link), and pin records no entry for it, saying why', async () => {
    const pinner = newHost();
    try {
      await pinner.load(linkedPackage);
      await pinner.load(helperPackage);
      await pinner.load(plainPackage);
      expect((await pinner.call('linked', {})).content).toEqual([{ type: 'text', text: 'v1' }]);
      expect((await pinner.call('helped', {})).content).toEqual([{ type: 'text', text: 'helper v1' }]);

      const report = await pinner.pin({ lockFile });
      expect(report.changes.map((change) => change.tool)).toEqual(['plain']);
      expect(report.notPinned.map((module) => [module.package, module.module, module.tool])).toEqual([
        ['helped-tools', 'tools/helped.js', 'helped'],
        ['linked-tools', 'tools/linked.js', 'linked'],
      ]);
      const linked = report.notPinned.find((module) => module.tool === 'linked');
      expect(linked?.reason).toContain(
        `${dependencyLink} is a symbolic link to ${join(outside, 'linked-dep')}`,
      );
      const lock = JSON.parse(readFileSync(lockFile, 'utf8'));
      expect(lock.tools.map((entry: { tool: string }) => entry.tool)).toEqual(['plain']);
    } finally {
      await pinner.close();
    }
  });

  it('a host under the lock withholds it with NOT_PINNED naming the link, and still after the linked code changes', async () => {
    const host = newHost(lockFile);
    try {
      await host.load(linkedPackage);
      await host.load(helperPackage);
      await host.load(plainPackage);
      expect(host.list().map((tool) => tool.name)).toEqual(['plain']);
      const withheld = (name: string) => host.status().find((status) => status.name === name);
      expect(withheld('linked')).toMatchObject({ state: 'left-out', code: 'NOT_PINNED' });
      expect(withheld('linked')?.reason).toContain(`${dependencyLink} is a symbolic link to`);
      expect(withheld('linked')?.reason).toContain('npm install, not npm link');
      expect(withheld('helped')?.reason).toContain(`${helperLink} is a symbolic link to`);

      // New code behind the link: nothing of it runs under the lock.
      writeFileSync(join(outside, 'linked-dep', 'index.js'), dependency('v2 (unreviewed)'));
      await host.load(linkedPackage);
      expect(withheld('linked')).toMatchObject({ state: 'left-out', code: 'NOT_PINNED' });
      const refused = await host.call('linked', {});
      expect(refused.isError).toBe(true);
      expect(refused.error?.code).toBe('UNKNOWN_TOOL');
      // The rest of the lock holds as before.
      expect((await host.call('plain', {})).content).toEqual([{ type: 'text', text: 'plain' }]);
    } finally {
      await host.close();
    }
  });

  it('toolhost pin says it did not pin it, names the link, and exits 1', async () => {
    const cliLock = join(tmp.path, 'cli.lock.json');
    const result = await runCli(['pin', linkedPackage, plainPackage, '--lock', cliLock], {
      tmpDir: tmp.path,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('linked (tools/linked.js)  not pinned: NOT_PINNED');
    expect(result.stdout).toContain(`${dependencyLink} is a symbolic link to`);
    const lock = JSON.parse(readFileSync(cliLock, 'utf8'));
    expect(lock.tools.map((entry: { tool: string }) => entry.tool)).toEqual(['plain']);
  });
});
