/**
 * Every way a call can fail is an error outcome with a code and a readable message; the host never
 * goes down, the pool answers again (its worker replaced when the fault ended it), and other calls
 * are unaffected.
 */
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

describe('a tool that fails', () => {
  it.each(FAULTS)(
    '$behaviour: $code, again on the next call of its pool, and the host still serves calls',
    async ({ file, name, code, message }) => {
      const { host } = await makeHost();
      await loadEcho(host);
      await host.load(fixtureModule(file));

      expect(await host.call(name, {})).toStrictEqual(failed(code, message));
      // The pool answers again: a worker the fault ended has been replaced.
      expect(await host.call(name, {})).toStrictEqual(failed(code, message));
      await expectHostFine(host);
    },
  );

  it('the caller can cap the timeout: a tool over it answers "tool timed out after N ms"', async () => {
    const { host } = await makeHost();
    await loadEcho(host);
    await host.load(fixtureModule('call-nap.js'));

    expect(await host.call('call_nap', { ms: 600_000 }, { timeoutMs: 250 })).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 250 ms'),
    );
    expect(await host.call('call_nap', { ms: 0 }, { timeoutMs: 250 })).toStrictEqual(answered('napped 0 ms'));
    await expectHostFine(host);
  });
});

describe('faults in a package: a hostile tool and its sibling share one pool', () => {
  const REPLACED: Array<[string, string, string, string]> = [
    ['exits', 'mixed_exits', 'TOOL_EXITED', 'the tool called process.exit(7)'],
    ['loops past its timeout', 'mixed_loops', 'TOOL_TIMEOUT', 'tool timed out after 300 ms'],
    [
      'exhausts the heap',
      'mixed_heap_bomb',
      'TOOL_OUT_OF_MEMORY',
      'the tool ran out of memory (heap limit 64 MB)',
    ],
  ];

  it.each(REPLACED)(
    'a tool that %s gets its error; its worker is replaced and the sibling answers from a new one',
    async (_behaviour, name, code, message) => {
      const { host } = await makeHost({ maxThreadsPerPool: 1, callHeapMb: 64 });
      await host.load(hostPackage('mixed-faults'));
      const before = jsonOf(await host.call('mixed_healthy', {})) as { healthy: boolean; threadId: number };

      expect(await host.call(name, {})).toStrictEqual(failed(code, message));

      const after = jsonOf(await host.call('mixed_healthy', {})) as { healthy: boolean; threadId: number };
      expect(before.healthy && after.healthy).toBe(true);
      expect(after.threadId).not.toBe(before.threadId);
    },
  );

  it.each([
    ['throws', 'mixed_throws', 'TOOL_THREW', 'mixed tool failed'],
    ['overflows the stack', 'mixed_overflows', 'TOOL_STACK_OVERFLOW', 'Maximum call stack size exceeded'],
  ])(
    'a tool that %s gets its error and the sibling answers from the same worker',
    async (_behaviour, name, code, message) => {
      const { host } = await makeHost({ maxThreadsPerPool: 1 });
      await host.load(hostPackage('mixed-faults'));
      const before = jsonOf(await host.call('mixed_healthy', {}));

      expect(await host.call(name, {})).toStrictEqual(failed(code, message));

      expect(jsonOf(await host.call('mixed_healthy', {}))).toStrictEqual(before);
    },
  );

  it('calls queued behind calls whose workers are ended (timeout, exit, out of memory) still run, in order', async () => {
    const { host } = await makeHost({ maxThreadsPerPool: 1, callHeapMb: 64 });
    await host.load(hostPackage('mixed-faults'));

    const outcomes = await Promise.all(
      [
        'mixed_loops',
        'mixed_healthy',
        'mixed_exits',
        'mixed_healthy',
        'mixed_heap_bomb',
        'mixed_healthy',
      ].map((name) => host.call(name, {})),
    );

    expect(
      outcomes.map((outcome) => outcome.error?.code ?? (jsonOf(outcome) as { healthy: boolean }).healthy),
    ).toEqual(['TOOL_TIMEOUT', true, 'TOOL_EXITED', true, 'TOOL_OUT_OF_MEMORY', true]);
  });

  it('calls beside a crashing one are unaffected: each of them gets its own answer', async () => {
    const { host } = await makeHost({ maxThreadsPerPool: 2 });
    const root = realpathSync(hostPackage('mixed-faults'));
    await host.load(root);

    const outcomes = await Promise.all([
      host.call('mixed_healthy', {}),
      host.call('mixed_exits', {}),
      host.call('mixed_healthy', {}),
      host.call('mixed_throws', {}),
      host.call('mixed_healthy', {}),
      host.call('mixed_exits', {}),
      host.call('mixed_healthy', {}),
    ]);

    expect(
      outcomes.map((outcome) => outcome.error?.code ?? (jsonOf(outcome) as { healthy: boolean }).healthy),
    ).toEqual([true, 'TOOL_EXITED', true, 'TOOL_THREW', true, 'TOOL_EXITED', true]);
  });
});

describe('unhandled rejections', () => {
  it('a rejection a tool leaves to fire after its reply never reaches a later call of its worker', async () => {
    const { host, logger } = await makeHost({ maxThreadsPerPool: 1 });
    const faults = collect(host, 'fault');
    await host.load(fixtureModule('call-rejects-after-reply.js'));

    const first = jsonOf(await host.call('call_rejects_after_reply', {})) as { threadId: number };
    // The same worker waits 150 ms: a leftover 50 ms timer of the first call would fire in this call.
    const second = jsonOf(await host.call('call_rejects_after_reply', { waitMs: 150 }));

    expect(first).toStrictEqual({ answered: 'first', threadId: first.threadId });
    expect(second).toStrictEqual({ waited: 150, threadId: first.threadId });
    expect(faults).toEqual([]);
    expect(logger.lines).toEqual([]);
  });
});
