/**
 * Every way a call can fail is an error outcome with a code and a readable message, the same in
 * every tier: the host never goes down, the pool answers again (its worker replaced when the fault
 * ended it), and other calls are unaffected. The catalogue runs on one host per tier, one attack
 * after another.
 */
import { describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../dist/src/index.js';
import { ALL_TIERS, withoutTierNotice } from './support/boundary.js';
import { FAULTS } from './support/fault-catalogue.js';
import {
  answered,
  collect,
  expectHostFine,
  failed,
  fixtureModule,
  hostPackage,
  jsonOf,
  useHosts,
} from './support/host-harness.js';
import { useSharedHost } from './support/shared-host.js';

const makeHost = useHosts();

/** The code of each outcome, or `true` for a healthy answer of mixed-faults. */
function codesOf(outcomes: ToolOutcome[]): Array<string | boolean> {
  return outcomes.map((outcome) => outcome.error?.code ?? (jsonOf(outcome) as { healthy: boolean }).healthy);
}

describe.each(ALL_TIERS)("isolation: '%s', a tool that fails", (isolation) => {
  const shared = useSharedHost({ isolation });

  it.each(FAULTS)(
    '$behaviour: $code, again on the next call of its pool, and the host still serves calls',
    async ({ file, name, code, message }) => {
      await shared.use(fixtureModule(file));
      const { host } = shared;

      expect(await host.call(name, {})).toStrictEqual(failed(code, message));
      // The pool answers again: a worker (or process) the fault ended has been replaced.
      expect(await host.call(name, {})).toStrictEqual(failed(code, message));
      await expectHostFine(host);
    },
  );

  it('a rejection the tool handles a few microtasks after it returned counts as handled, as in Node: the call answers', async () => {
    await shared.use(fixtureModule('call-handles-late.js'));

    expect(await shared.host.call('call_handles_late', {})).toStrictEqual(answered('handled it later'));
    await expectHostFine(shared.host);
  });

  it("a tool's own unhandledRejection listener sees none of the rejections toolhost leaves to find the tool's", async () => {
    await shared.use(fixtureModule('call-watches-rejections.js'));

    // Enough calls that every worker of the pool has run a few.
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => shared.host.call('call_watches_rejections', {})),
    );
    expect(outcomes).toStrictEqual(Array.from({ length: 8 }, () => answered('seen 0')));
    expect(await shared.host.call('call_watches_rejections', {})).toStrictEqual(answered('seen 0'));
    await expectHostFine(shared.host);
  });

  it("a tool that wraps Promise.reject never sees the worker's own rejections", async () => {
    await shared.use(fixtureModule('call-watches-reject.js'));

    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => shared.host.call('call_watches_reject', {})),
    );
    expect(outcomes).toStrictEqual(Array.from({ length: 8 }, () => answered('seen 0')));
    await expectHostFine(shared.host);
  });

  it.each(['listeners', 'emit'])(
    'a tool that takes away %s (what finding a left rejection goes through) still gets answers, that call and the next',
    async (how) => {
      await shared.use(fixtureModule('call-tampers-emit.js'));
      const { host } = shared;

      const calls = await Promise.all(
        Array.from({ length: 4 }, () => host.call('call_tampers_emit', { how })),
      );
      expect(calls).toStrictEqual(Array.from({ length: 4 }, () => answered(`took away: ${how}`)));
      expect(await host.call('call_tampers_emit', { how: 'nothing' })).toStrictEqual(
        answered('took away: nothing'),
      );
      await expectHostFine(host);
    },
  );

  it('the caller can cap the timeout: a tool over it answers "tool timed out after N ms"', async () => {
    await shared.use(fixtureModule('call-nap.js'));
    const { host } = shared;

    expect(await host.call('call_nap', { ms: 600_000 }, { timeoutMs: 250 })).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 250 ms'),
    );
    expect(await host.call('call_nap', { ms: 0 }, { timeoutMs: 250 })).toStrictEqual(answered('napped 0 ms'));
    await expectHostFine(host);
  });

  it("a __proto__ key in the arguments reaches the tool as an own key, and can't pollute Object.prototype", async () => {
    await shared.use(fixtureModule('call-proto-args.js'));
    const args = JSON.parse(
      '{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}',
    );

    expect((await shared.host.call('call_proto_args', args)).error).toMatchObject({
      code: 'TOOL_THREW',
      message: 'Cannot add property polluted, object is not extensible',
    });
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
    await expectHostFine(shared.host);
  });
});

describe.each(ALL_TIERS)("isolation: '%s', timeouts and one worker", (isolation) => {
  it('a capped timeout is counted from when the call starts running, not while it waits for a worker', async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
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

  it('a rejection a tool leaves to fire after its reply never reaches a later call of its worker', async () => {
    const { host, logger } = await makeHost({ isolation, maxThreadsPerPool: 1 });
    const faults = collect(host, 'fault');
    await host.load(fixtureModule('call-rejects-after-reply.js'));
    const lines = logger.lines.length;

    const first = jsonOf(await host.call('call_rejects_after_reply', {})) as { isolate: string };
    // The same worker waits 150 ms: a leftover 50 ms timer of the first call would fire in this call.
    const second = jsonOf(await host.call('call_rejects_after_reply', { waitMs: 150 }));

    expect(first).toStrictEqual({ answered: 'first', isolate: first.isolate });
    expect(second).toStrictEqual({ waited: 150, isolate: first.isolate });
    expect(faults).toEqual([]);
    expect(withoutTierNotice(logger.lines.slice(lines))).toEqual([]);
  });
});

describe.each(ALL_TIERS)(
  "isolation: '%s', faults in a package: a hostile tool and its sibling share one pool",
  (isolation) => {
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
      'a tool that %s gets its error; its worker is replaced and the sibling answers from a new one',
      async (_behaviour, name, code, message) => {
        const { host } = await makeHost({ isolation, maxThreadsPerPool: 1, callHeapMb: 64 });
        await host.load(hostPackage('mixed-faults'));
        const before = jsonOf(await host.call('mixed_healthy', {})) as { healthy: boolean; isolate: string };

        expect(await host.call(name, {})).toStrictEqual(failed(code, message));

        const after = jsonOf(await host.call('mixed_healthy', {})) as { healthy: boolean; isolate: string };
        expect(before.healthy && after.healthy).toBe(true);
        expect(after.isolate).not.toBe(before.isolate);
      },
    );

    it.each([
      ['throws', 'mixed_throws', 'TOOL_THREW', 'mixed tool failed'],
      ['overflows the stack', 'mixed_overflows', 'TOOL_STACK_OVERFLOW', 'Maximum call stack size exceeded'],
    ])(
      'a tool that %s gets its error and the sibling answers from the same worker',
      async (_behaviour, name, code, message) => {
        const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
        await host.load(hostPackage('mixed-faults'));
        const before = jsonOf(await host.call('mixed_healthy', {}));

        expect(await host.call(name, {})).toStrictEqual(failed(code, message));

        expect(jsonOf(await host.call('mixed_healthy', {}))).toStrictEqual(before);
      },
    );

    it('calls queued behind calls whose workers are ended (timeout, exit, out of memory) still run, in order', async () => {
      const { host } = await makeHost({ isolation, maxThreadsPerPool: 1, callHeapMb: 64 });
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

      expect(codesOf(outcomes)).toEqual([
        'TOOL_TIMEOUT',
        true,
        'TOOL_EXITED',
        true,
        'TOOL_OUT_OF_MEMORY',
        true,
      ]);
    });

    it('calls beside a crashing one are unaffected: each of them gets its own answer', async () => {
      const { host } = await makeHost({ isolation, maxThreadsPerPool: 2 });
      await host.load(hostPackage('mixed-faults'));

      const names = [
        'mixed_healthy',
        'mixed_exits',
        'mixed_healthy',
        'mixed_throws',
        'mixed_healthy',
        'mixed_exits',
        'mixed_healthy',
      ];
      const outcomes = await Promise.all(names.map((name) => host.call(name, {})));

      expect(codesOf(outcomes)).toEqual([true, 'TOOL_EXITED', true, 'TOOL_THREW', true, 'TOOL_EXITED', true]);
    });
  },
);
