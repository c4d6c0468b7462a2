/**
 * Timeouts a tool might turn off (issue 10). A call's deadline is armed on the host's own clock when
 * the host's balancer hands the call to a worker; nothing a worker writes or does moves it: clocks
 * changed inside the worker, piscina kept from posting or from taking the next task, a handler that
 * never settles, a timeout timers can't hold, a thread blocked in a child process.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { boundaryFixture, runHostInChild, TIERS } from './support/boundary.js';
import { answered, expectHostFine, failed, loadEcho, useHosts } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const makeHost = useHosts();
const TIMED_OUT = failed('TOOL_TIMEOUT', 'tool timed out after 500 ms');

for (const isolation of TIERS) {
  describe(`isolation: '${isolation}'`, () => {
    async function hostWith(file: string) {
      const made = await makeHost({ isolation, maxThreadsPerPool: 1 });
      await loadEcho(made.host);
      const report = await made.host.load(boundaryFixture(file));
      expect(report.modules.map((module) => module.state)).toEqual(['offered']);
      return made;
    }

    it('a timeoutMs of 2 ** 40 means the default 30000, and a call raises no timer overflow warning', async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        const { host } = await hostWith('decl-timeout-2-pow-40.js');

        expect(host.list().find((tool) => tool.name === 'decl_timeout_2_pow_40')?.timeoutMs).toBe(30_000);
        expect(await host.call('decl_timeout_2_pow_40', {})).toStrictEqual(answered('ran'));
        await expectHostFine(host);
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    });

    it('a tool that moves every clock and deadline in its worker, then loops, still times out', async () => {
      const { host } = await hostWith('call-tampers-with-clocks.js');

      expect(await host.call('call_tampers_with_clocks', {})).toStrictEqual(TIMED_OUT);
      expect(await host.call('call_tampers_with_clocks', {})).toStrictEqual(TIMED_OUT);
      await expectHostFine(host);
    });

    it('a tool that keeps piscina from posting its reply times out', async () => {
      const { host } = await hostWith('call-stalls-piscina-after-reply.js');

      expect(await host.call('call_stalls_piscina_after_reply', {})).toStrictEqual(TIMED_OUT);
      expect(await host.call('call_stalls_piscina_after_reply', {})).toStrictEqual(TIMED_OUT);
      await expectHostFine(host);
    });

    it('a tool that wedges its worker between calls: the next call times out, the one after runs on a new worker', async () => {
      const { host } = await hostWith('call-wedges-piscina-between-calls.js');

      expect(await host.call('call_wedges_piscina_between_calls', {})).toStrictEqual(answered('wedged'));
      expect(await host.call('call_wedges_piscina_between_calls', {})).toStrictEqual(TIMED_OUT);
      expect(await host.call('call_wedges_piscina_between_calls', {})).toStrictEqual(answered('wedged'));
      await expectHostFine(host);
    });

    it("a handler of its own that never settles, put in place of toolhost's, times out", async () => {
      const { host } = await hostWith('call-hijacks-handler-that-never-settles.js');
      const tool = 'call_hijacks_handler_that_never_settles';

      expect(await host.call(tool, { arm: true })).toStrictEqual(answered('armed'));
      expect(await host.call(tool, {})).toStrictEqual(TIMED_OUT);
      expect(await host.call(tool, {})).toStrictEqual(answered('not armed'));
      await expectHostFine(host);
    });
  });
}

describe("a call blocked in a child process (isolation: 'worker'; strict refuses child processes)", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('toolhost-blocked-');
  });
  afterEach(async () => {
    await removeDir(dir);
  });

  it('answers TOOL_TIMEOUT, close() resolves, the host process exits by itself and the child is gone', async () => {
    const pidFile = join(dir, 'sleep.pid');

    // The child host's proof is that it exits at all: its call would otherwise block for 600 s.
    const run = await runHostInChild({
      load: [boundaryFixture('call-blocks-in-execfilesync.js')],
      options: { dataDir: join(dir, 'data') },
      calls: [{ tool: 'call_blocks_in_execfilesync', args: { pidFile } }],
    });

    expect(run.signal).toBeNull();
    expect(run.code).toBe(0);
    expect(run.report?.loaded).toEqual(['offered']);
    expect(run.report?.outcomes).toStrictEqual([TIMED_OUT]);
    expect(run.report?.closed).toBe(true);
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(Number.isSafeInteger(pid) && pid > 0).toBe(true);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
