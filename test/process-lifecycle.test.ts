/**
 * The life of a package's processes: when one dies (a tool SIGKILLs it), its call answers and the
 * next call starts a new one, while the package's other processes and other packages never notice;
 * a tool blocked in a native call is answered at its timeout, and the host still closes and its
 * process exits by itself; close() ends every package process, whatever they were doing; a
 * caller's abort ends the call and its process, as it ends a worker.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { outcomeText, type ToolHost } from '../dist/src/index.js';
import { descendantsOf } from '../dist/src/shared/process-tree.js';
import {
  answered,
  expectHostFine,
  failed,
  hostPackage,
  jsonOf,
  loadEcho,
  useHosts,
} from './support/host-harness.js';
import { runHostProcess } from './support/host-process.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));

const makeHost = useHosts();

/** Resolves once the tool `name` reports progress (it is running). */
function running(host: ToolHost, callId: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (event: { callId: string }) => {
      if (event.callId !== callId) return;
      host.off('progress', listener);
      resolve();
    };
    host.on('progress', listener);
  });
}

/** The package processes below this one (what a host started: bwrap, or node running child-main). */
function packageProcesses(): number[] {
  return descendantsOf(process.pid).filter((pid) => {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return command.includes('child-main.js') || command.startsWith('bwrap');
    } catch {
      return false;
    }
  });
}

describe("isolation: 'process', a process that dies", () => {
  it("a tool that SIGKILLs its own process gets TOOL_CRASHED, the call beside it in another process of the package runs on, and the next call runs in a new process; other packages don't notice", async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 2 });
    await loadEcho(host);
    await host.load(HOSTILE);
    const napping = running(host, 'beside');
    const caller = new AbortController();
    const beside = host.call('proc_nap', { ms: 600_000 }, { callId: 'beside', signal: caller.signal });
    await napping;

    let besideAnswered = false;
    void beside.then(() => {
      besideAnswered = true;
    });

    const killed = failed('TOOL_CRASHED', "the tool's process was killed (SIGKILL)");
    expect(await host.call('proc_sigkill_self', {})).toStrictEqual(killed);
    // A whole call later, still running: a call its process lost would have answered with the kill.
    expect(await host.call('proc_nap', { ms: 0 })).toStrictEqual(answered('napped 0 ms'));
    expect(besideAnswered).toBe(false);
    caller.abort();
    expect(await beside).toStrictEqual(failed('CALL_ABORTED', 'the call was aborted by its caller'));

    expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
    await expectHostFine(host);
  });

  it.skipIf(process.platform !== 'linux')(
    'close() answers the calls still running with HOST_CLOSED and ends every package process',
    async () => {
      const { host } = await makeHost({ isolation: 'process' });
      await host.load(HOSTILE);
      const napping = running(host, 'long');
      const call = host.call('proc_nap', { ms: 600_000 }, { callId: 'long' });
      await napping;
      expect(packageProcesses().length).toBeGreaterThan(0);

      await host.close();

      expect(await call).toStrictEqual(failed('HOST_CLOSED', 'the tool host closed during the call'));
      expect(packageProcesses()).toEqual([]);
    },
  );
});

describe("isolation: 'process', a caller's abort", () => {
  it('answers CALL_ABORTED and ends the process the call ran in, as a worker is ended; the next call runs in a new one', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1 });
    await host.load(HOSTILE);
    const ended: string[] = [];
    const firstEnded = new Promise<void>((resolve) =>
      host.on('workers', (event) => {
        if (event.type !== 'ended' || event.source === 'spare') return;
        ended.push(event.source);
        resolve();
      }),
    );

    const caller = new AbortController();
    const napping = running(host, 'aborted');
    const call = host.call('proc_nap', { ms: 600_000 }, { callId: 'aborted', signal: caller.signal });
    await napping;
    caller.abort();
    expect(await call).toStrictEqual(failed('CALL_ABORTED', 'the call was aborted by its caller'));

    expect(await host.call('proc_nap', { ms: 0 })).toStrictEqual(answered('napped 0 ms'));
    // Its process, and only it, was ended: the next call started another. The end is reported when
    // the process has exited, which on a loaded machine can come after the next call's answer.
    await firstEnded;
    expect(ended).toHaveLength(1);
  });
});

describe("isolation: 'process', a call whose process starts for it", () => {
  it('aborted before its process is ready, leaves that process to the next call: no other starts, and close() does not wait for it', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 2 });
    await host.load(HOSTILE);
    const source = realpathSync(HOSTILE);
    const started: number[] = [];
    const caller = new AbortController();
    // The first process of the package is under way (a spare taken, or one started): the call's
    // caller gives up before it is ready.
    const starting = new Promise<void>((resolve) => {
      host.on('workers', (event) => {
        if (event.type !== 'started' || event.source !== source) return;
        started.push(event.count);
        caller.abort();
        resolve();
      });
    });
    const call = host.call('proc_nap', { ms: 0 }, { signal: caller.signal });
    await starting;
    expect(await call).toStrictEqual(failed('CALL_ABORTED', 'the call was aborted by its caller'));

    expect(await host.call('proc_nap', { ms: 0 })).toStrictEqual(answered('napped 0 ms'));
    expect(started).toEqual([1]);
  });
});

describe("isolation: 'process', a fault outside any call", () => {
  it('ends its process at once: the next call, made the moment the fault is heard, runs in another', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1 });
    await host.load(HOSTILE);
    const faulted = new Promise<string>((resolve) => host.on('fault', (event) => resolve(event.message)));

    expect(await host.call('proc_throw_later', {})).toStrictEqual(answered('answered'));
    expect(await faulted).toMatch(/thrown after the reply/);
    // Its process is exiting: a call sent to it would answer for its exit.
    expect(await host.call('proc_nap', { ms: 0 })).toStrictEqual(answered('napped 0 ms'));
  });
});

describe("isolation: 'process', a package's idle processes", () => {
  it('the next call takes the one idle the shortest time, so that the others can reach idleTimeoutMs', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 2 });
    await host.load(hostPackage('mixed-faults'));
    const isolateOf = async () =>
      (jsonOf(await host.call('mixed_healthy', {})) as { isolate: string }).isolate;
    // Two at once: two processes.
    const [first, second] = await Promise.all([isolateOf(), isolateOf()]);
    expect(first).not.toBe(second);

    // One at a time: always the last one used.
    const next = await isolateOf();
    expect([await isolateOf(), await isolateOf(), await isolateOf()]).toEqual([next, next, next]);
  });
});

describe("isolation: 'process', a tool blocked in a native call", () => {
  it('is answered at its timeout; close() resolves and the host process exits by itself', async () => {
    const plan = {
      options: { isolation: 'process' },
      packages: [HOSTILE],
      calls: [
        { name: 'proc_block_native', args: {}, options: { timeoutMs: 500 } },
        { name: 'proc_read_own_file', args: {} },
      ],
    };
    const { code, signal, stdout, stderr } = await runHostProcess(plan);

    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(stdout.split('\n')).toEqual([
      `RESULT ${JSON.stringify({ content: [{ type: 'text', text: 'tool timed out after 500 ms' }], isError: true, error: { code: 'TOOL_TIMEOUT', message: 'tool timed out after 500 ms' } })}`,
      `RESULT ${JSON.stringify(answered('process-hostile'))}`,
      'CLOSED',
      '',
    ]);
  });
});
