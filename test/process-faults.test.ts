/**
 * The process tier answers every fault the worker tier answers, the same way: the same catalogue of
 * failing tools, the same codes and messages, the pool answering again, calls beside a fault
 * unaffected, timeouts counted from when a call starts running. Each trust domain runs in a process
 * of its own here, with the same pool of worker threads inside it.
 */
import { describe, expect, it } from 'vitest';
import type { ToolProgressEvent } from '../dist/src/index.js';
import { FAULTS } from './support/fault-catalogue.js';
import {
  answered,
  collect,
  expectHostFine,
  failed,
  fixtureModule,
  hostPackage,
  jsonOf,
  loadEcho,
  useHosts,
} from './support/host-harness.js';

const makeHost = useHosts();

describe("isolation: 'process', a tool that fails", () => {
  it.each(FAULTS)(
    '$behaviour: $code, again on the next call of its process, and the host still serves calls',
    async ({ file, name, code, message }) => {
      const { host } = await makeHost({ isolation: 'process' });
      await loadEcho(host);
      await host.load(fixtureModule(file));

      expect(await host.call(name, {})).toStrictEqual(failed(code, message));
      expect(await host.call(name, {})).toStrictEqual(failed(code, message));
      await expectHostFine(host);
    },
  );

  it('the caller can cap the timeout, counted from when the call starts running', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-nap.js'));

    expect(await host.call('call_nap', { ms: 600_000 }, { timeoutMs: 250 })).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 250 ms'),
    );
    // The first call holds the only worker for 1.5 s; the second waits that long, over its own 1 s
    // limit, but runs in well under it once it starts.
    const first = host.call('call_nap', { ms: 1_500 });
    const second = host.call('call_nap', { ms: 0 }, { timeoutMs: 1_000 });
    expect(await first).toStrictEqual(answered('napped 1500 ms'));
    expect(await second).toStrictEqual(answered('napped 0 ms'));
  });
});

describe("isolation: 'process', faults in a package: a hostile tool and its sibling share one process", () => {
  it.each([
    ['exits', 'mixed_exits', 'TOOL_EXITED', 'the tool called process.exit(7)'],
    ['loops past its timeout', 'mixed_loops', 'TOOL_TIMEOUT', 'tool timed out after 300 ms'],
    [
      'exhausts the heap',
      'mixed_heap_bomb',
      'TOOL_OUT_OF_MEMORY',
      'the tool ran out of memory (heap limit 64 MB)',
    ],
  ])(
    'a tool that %s gets its error; its worker is replaced inside the same process',
    async (_, name, code, message) => {
      const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1, callHeapMb: 64 });
      await host.load(hostPackage('mixed-faults'));
      const before = jsonOf(await host.call('mixed_healthy', {})) as { healthy: boolean; threadId: number };

      expect(await host.call(name, {})).toStrictEqual(failed(code, message));

      const after = jsonOf(await host.call('mixed_healthy', {})) as { healthy: boolean; threadId: number };
      expect(before.healthy && after.healthy).toBe(true);
      expect(after.threadId).not.toBe(before.threadId);
    },
  );

  it('calls queued behind calls whose workers are ended still run, in order', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1, callHeapMb: 64 });
    await host.load(hostPackage('mixed-faults'));

    const names = [
      'mixed_loops',
      'mixed_healthy',
      'mixed_exits',
      'mixed_healthy',
      'mixed_heap_bomb',
      'mixed_healthy',
    ];
    const outcomes = await Promise.all(names.map((name) => host.call(name, {})));

    expect(
      outcomes.map((outcome) => outcome.error?.code ?? (jsonOf(outcome) as { healthy: boolean }).healthy),
    ).toEqual(['TOOL_TIMEOUT', true, 'TOOL_EXITED', true, 'TOOL_OUT_OF_MEMORY', true]);
  });

  it('calls beside a crashing one are unaffected: each of them gets its own answer', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 2 });
    await host.load(hostPackage('mixed-faults'));

    const names = [
      'mixed_healthy',
      'mixed_exits',
      'mixed_healthy',
      'mixed_throws',
      'mixed_healthy',
      'mixed_exits',
    ];
    const outcomes = await Promise.all(names.map((name) => host.call(name, {})));

    expect(
      outcomes.map((outcome) => outcome.error?.code ?? (jsonOf(outcome) as { healthy: boolean }).healthy),
    ).toEqual([true, 'TOOL_EXITED', true, 'TOOL_THREW', true, 'TOOL_EXITED']);
  });
});

describe("isolation: 'process', what crosses back", () => {
  it("emit reaches the host's 'progress' event, in order, before the call answers", async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-progress.js'));
    const progress = collect(host, 'progress');

    for (let round = 1; round <= 5; round++) {
      const callId = `progress_${round}`;
      const outcome = await host.call('call_progress', {}, { callId });
      const expected: ToolProgressEvent[] = [
        { name: 'call_progress', callId, data: { step: 1, of: 2 } },
        { name: 'call_progress', callId, data: { step: 2, of: 2 } },
      ];
      expect(progress.splice(0)).toStrictEqual(expected);
      expect(outcome).toStrictEqual(answered('done'));
    }
  });

  it("a console.log flood is captured and capped, handed to the 'output' event", async () => {
    const maxLogChars = 1_000;
    const { host, logger } = await makeHost({ isolation: 'process', maxLogChars });
    await host.load(fixtureModule('call-console-flood.js'));
    const outputs = collect(host, 'output');

    expect(await host.call('call_console_flood', {}, { callId: 'noisy_1' })).toStrictEqual(
      answered('printed'),
    );

    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.logs[0]).toStrictEqual({ stream: 'stderr', text: 'flood starts on stderr\n' });
    expect(outputs[0]?.logs.map((log) => log.text).join('')).toHaveLength(maxLogChars);
    expect(outputs[0]?.droppedChars).toBeGreaterThan(0);
    expect(logger.lines).toEqual([]);
  });

  it('a caller that aborts gets CALL_ABORTED, and the process runs the next call on a new worker', async () => {
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-progress-then-loop.js'));
    const progress = collect(host, 'progress');

    for (const callId of ['aborted_1', 'aborted_2']) {
      const controller = new AbortController();
      const looping = new Promise<void>((resolve) => host.once('progress', () => resolve()));
      const call = host.call('call_progress_then_loop', {}, { callId, signal: controller.signal });
      await looping;
      controller.abort();
      expect(await call).toStrictEqual(failed('CALL_ABORTED', 'the call was aborted by its caller'));
    }
    expect(progress.map((event) => event.callId)).toEqual(['aborted_1', 'aborted_2']);
  });
});

describe("isolation: 'process', __proto__ in the arguments", () => {
  it("reaches the tool as an own key, and can't pollute Object.prototype, in its worker or the host", async () => {
    const { host } = await makeHost({ isolation: 'process' });
    await host.load(fixtureModule('call-proto-args.js'));
    const args = JSON.parse(
      '{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}',
    );

    expect((await host.call('call_proto_args', args)).error).toMatchObject({
      code: 'TOOL_THREW',
      message: 'Cannot add property polluted, object is not extensible',
    });
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
  });
});
