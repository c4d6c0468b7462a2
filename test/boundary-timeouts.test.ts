/**
 * Timeouts a tool might turn off. A call's deadline is armed on the host's own clock when
 * the host's balancer hands the call to a worker; nothing a worker writes or does moves it: clocks
 * changed inside the worker, piscina kept from posting or from taking the next task, a handler that
 * never settles, a timeout timers can't hold, a thread blocked in a child process.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { boundaryFixture, runHostInChild, TIERS } from './support/boundary.js';
import { answered, expectHostFine, failed } from './support/host-harness.js';
import { useSharedHost } from './support/shared-host.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const TIMED_OUT = failed('TOOL_TIMEOUT', 'tool timed out after 500 ms');

describe.each(TIERS)("isolation: '%s', one host through every attack", (isolation) => {
  const shared = useSharedHost({ isolation, maxThreadsPerPool: 1 });
  async function hostWith(file: string) {
    await shared.use(boundaryFixture(file));
    return shared;
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

describe("a call blocked in a child process (isolation: 'worker'; strict refuses child processes)", () => {
  let dir: string;
  let killed: AbortController;
  beforeEach(async () => {
    dir = await tempDir('toolhost-blocked-');
    killed = new AbortController();
  });
  afterEach(async () => {
    killed.abort();
    // What a test started and left running is ended by its pid, never by name.
    const pid = await readPid(join(dir, 'sleep.pid')).catch(() => undefined);
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await removeDir(dir);
  });

  /** A process's state letter (`Z` for a zombie: killed, not yet reaped by its new parent), or gone. */
  async function runState(pid: number): Promise<string> {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    return stat === undefined ? 'gone' : (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '');
  }

  async function readPid(path: string): Promise<number> {
    const pid = Number((await readFile(path, 'utf8')).trim());
    if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`no pid in ${path}`);
    return pid;
  }

  const blocked = (fixture: string, tool: string) =>
    runHostInChild(
      {
        load: [boundaryFixture(fixture)],
        options: { dataDir: join(dir, 'data') },
        calls: [{ tool, args: { pidFile: join(dir, 'sleep.pid') } }],
      },
      { signal: killed.signal },
    );

  it.each([
    ['its child', 'call-blocks-in-execfilesync.js', 'call_blocks_in_execfilesync'],
    ["its child's child", 'call-blocks-on-a-grandchild.js', 'call_blocks_on_a_grandchild'],
  ])(
    'on %s: answers TOOL_TIMEOUT, close() resolves, the host process exits by itself and the sleep is gone',
    async (_on, fixture, tool) => {
      // The child host's proof is that it exits at all: its call would otherwise block for 600 s.
      const run = await blocked(fixture, tool);

      expect(run.signal).toBeNull();
      expect(run.code).toBe(0);
      expect(run.report?.loaded).toEqual(['offered']);
      expect(run.report?.outcomes).toStrictEqual([TIMED_OUT]);
      expect(run.report?.closed).toBe(true);
      expect(await runState(await readPid(join(dir, 'sleep.pid')))).toMatch(/^(gone|Z)$/);
    },
  );

  // HOLE (see docs/limits.md, the worker tier): a process orphaned before the host looks (here a sleep whose
  // parent subshell exited at once) is no longer a descendant of the worker's thread, so the host
  // can't find it to end it; it still holds the pipe the thread's execFileSync reads, so the thread,
  // and with it the host process, can't end until it does (600 s). close() still resolves. The test
  // gives up on the child host after 8 s (its call times out after 0.5 s; a host that ends its
  // calls exits within about 2 s, see the two tests above).
  it.fails('on an orphaned process: the host process exits by itself', async () => {
    const run = await blocked('call-blocks-on-an-orphan.js', 'call_blocks_on_an_orphan');

    expect(run.code).toBe(0);
    expect(run.report?.outcomes).toStrictEqual([TIMED_OUT]);
  }, 8_000);
});
