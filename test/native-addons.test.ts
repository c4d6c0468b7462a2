/**
 * Native addons, with better-sqlite3 (built from source by npm ci): on by default in the process
 * tier inside bubblewrap, where the operating system holds whatever code runs; off in the thread
 * tiers and without a sandbox, where a tool that loads one is told the flag and the option that
 * allow it; allowed there per package by name.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PERMISSION_MODEL_USABLE } from '../dist/src/calls/isolation.js';
import { outcomeText, ToolHost, type ToolOutcome } from '../dist/src/index.js';
import { processTierSandboxed } from '../dist/src/process/sandbox/process-tier.js';
import { freshDir, runCli } from './support/cli-run.js';
import { loadEcho, useHosts } from './support/host-harness.js';
import { SQLITE_UNUSABLE, writeSqlitePackage } from './support/sqlite-package.js';

const OFF =
  "process.dlopen is not available: native addons are off for this package; allow them with --allow-addons PACKAGE (the allowAddons: ['PACKAGE'] option), or run it in the process tier in bubblewrap, where they are on";
const CALL_ONCE = fileURLToPath(new URL('./support/hosts/call-once.mjs', import.meta.url));
const tmp = freshDir('toolhost-addons');
afterAll(() => tmp.remove());
const SANDBOXED = await processTierSandboxed();
const sqlite = SQLITE_UNUSABLE === undefined ? writeSqlitePackage(tmp.path, 'sqlite-tools', 'sqlite') : '';
const other = SQLITE_UNUSABLE === undefined ? writeSqlitePackage(tmp.path, 'other-sqlite', 'other') : '';
const makeHost = useHosts();

/** The host and the next call are fine after a refusal or an addon's work. */
async function expectHostFine(host: ToolHost): Promise<void> {
  await loadEcho(host);
  expect(outcomeText(await host.call('echo', { text: 'still here' }))).toContain('still here');
}

describe.skipIf(SQLITE_UNUSABLE !== undefined)(
  `native addons (better-sqlite3${SQLITE_UNUSABLE === undefined ? '' : `, skipped: ${SQLITE_UNUSABLE}`})`,
  () => {
    it.skipIf(!SANDBOXED)(
      'the process tier in bubblewrap lets a tool load it by default, at its top level or in a call',
      async () => {
        const { host } = await makeHost({ isolation: 'process' });
        const report = await host.load(sqlite);
        expect(report.modules.map((module) => module.state)).toEqual(['offered', 'offered']);
        expect(outcomeText(await host.call('sqlite_sum', { values: [1, 2, 3.5] }))).toBe('6.5');
        expect(outcomeText(await host.call('sqlite_version', {}))).toMatch(/^3\.\d+\.\d+$/);
        await expectHostFine(host);
      },
    );

    it('the worker tier refuses it: the call and the read name --allow-addons and allowAddons, and the host runs on', async () => {
      const { host } = await makeHost();
      const report = await host.load(sqlite);
      const version = report.modules.find((module) => module.path.endsWith('version.js'));
      expect(version).toMatchObject({ state: 'left-out', reason: expect.stringContaining(OFF) });
      const outcome = await host.call('sqlite_sum', { values: [1] });
      expect(outcome.isError).toBe(true);
      expect(outcome.error).toMatchObject({ code: 'TOOL_THREW', message: OFF });
      await expectHostFine(host);
      expect((await host.call('sqlite_sum', { values: [2] })).error?.message).toBe(OFF);
    });

    it("allowAddons: ['sqlite-tools'] lets that package load it in the worker tier, and no other", async () => {
      const { host } = await makeHost({ allowAddons: ['sqlite-tools'] });
      expect((await host.load(sqlite)).modules.map((module) => module.state)).toEqual(['offered', 'offered']);
      await host.load(other);
      expect(outcomeText(await host.call('sqlite_sum', { values: [40, 2] }))).toBe('42');
      expect((await host.call('other_sum', { values: [1] })).error).toMatchObject({
        code: 'TOOL_THREW',
        message: OFF,
      });
      await expectHostFine(host);
    });

    it.skipIf(!PERMISSION_MODEL_USABLE)('strict refuses it unless the package is named', async () => {
      const { host } = await makeHost({ isolation: 'strict' });
      await host.load(sqlite);
      expect((await host.call('sqlite_sum', { values: [1] })).error).toMatchObject({
        code: 'TOOL_THREW',
        message: OFF,
      });
      const { host: named } = await makeHost({ isolation: 'strict', allowAddons: ['sqlite-tools'] });
      await named.load(sqlite);
      expect(outcomeText(await named.call('sqlite_sum', { values: [1, 1] }))).toBe('2');
    });

    it.skipIf(!SANDBOXED)(
      'allowAddons: false keeps them off even in bubblewrap, also for a declaration kept in the store',
      async () => {
        // Read first where addons load: the module that opens its database at its top level is offered, and kept.
        const { host: first } = await makeHost({ isolation: 'process' });
        expect((await first.load(sqlite)).modules.map((module) => module.state)).toEqual([
          'offered',
          'offered',
        ]);
        const { host } = await makeHost({ isolation: 'process', allowAddons: false });
        const report = await host.load(sqlite);
        const version = report.modules.find((module) => module.path.endsWith('version.js'));
        expect(version).toMatchObject({ state: 'left-out', reason: expect.stringContaining(OFF) });
        expect((await host.call('sqlite_sum', { values: [1] })).error).toMatchObject({
          code: 'TOOL_THREW',
          message: OFF,
        });
        await expectHostFine(host);
      },
    );

    it('the process tier without a sandbox (bubblewrap not on PATH) refuses it, and allows it by name', async () => {
      const withoutSandbox = async (options: Record<string, unknown>) =>
        JSON.parse(
          await new Promise<string>((resolve, reject) =>
            execFile(
              process.execPath,
              [
                CALL_ONCE,
                JSON.stringify({ options, load: sqlite, tool: 'sqlite_sum', args: { values: [2, 3] } }),
              ],
              { env: { PATH: '', TMPDIR: tmp.path }, timeout: 60_000 },
              (error, stdout, stderr) =>
                error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)),
            ),
          ),
        ) as { statuses: Array<{ isolation?: string }>; outcome: ToolOutcome };
      const refused = await withoutSandbox({ dataDir: join(tmp.path, 'data-refused') });
      expect(refused.statuses.map((status) => status.isolation)).toEqual(['process', 'process']);
      expect(refused.outcome.error).toMatchObject({ code: 'TOOL_THREW', message: OFF });
      const named = await withoutSandbox({
        dataDir: join(tmp.path, 'data-named'),
        allowAddons: ['sqlite-tools'],
      });
      expect(outcomeText(named.outcome)).toBe('5');
    });

    it('toolhost call --allow-addons PKG allows them; without it the error names the flag (exit 1)', async () => {
      const refused = await runCli(['call', sqlite, 'sqlite_sum', '{"values":[1,2]}'], { tmpDir: tmp.path });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('--allow-addons PACKAGE');
      const allowed = await runCli(
        ['call', '--allow-addons', 'sqlite-tools', sqlite, 'sqlite_sum', '{"values":[1,2]}'],
        {
          tmpDir: tmp.path,
        },
      );
      expect(allowed.code).toBe(0);
      expect(allowed.stdout.trim()).toBe('3');
    });
  },
);

describe('the allowAddons option', () => {
  it('takes a boolean or a list of package names, and names itself otherwise', () => {
    for (const value of ['yes', [''], [1], { 'sqlite-tools': true }]) {
      expect(() => new ToolHost({ allowAddons: value as never })).toThrow(
        expect.objectContaining({
          code: 'INVALID_OPTION',
          message: expect.stringMatching(
            /^Expected `allowAddons` to be a boolean or an array of package names, got /,
          ),
        }),
      );
    }
  });
});
