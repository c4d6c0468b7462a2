/**
 * Every way a call can fail is an error outcome with a code and a readable message; the host never
 * goes down, the pool answers again (its worker replaced when the fault ended it), and other calls
 * are unaffected.
 */
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

const FAULTS: Array<{ behaviour: string; file: string; name: string; code: string; message: string }> = [
  {
    behaviour: 'throws an Error',
    file: 'call-throw-error.js',
    name: 'call_throw_error',
    code: 'TOOL_THREW',
    message: 'the weather service is down',
  },
  {
    behaviour: 'throws null',
    file: 'call-throw-null.js',
    name: 'call_throw_null',
    code: 'TOOL_THREW',
    message: 'the tool threw null',
  },
  {
    behaviour: 'throws undefined',
    file: 'call-throw-undefined.js',
    name: 'call_throw_undefined',
    code: 'TOOL_THREW',
    message: 'the tool threw undefined',
  },
  {
    behaviour: 'throws a string',
    file: 'call-throw-string.js',
    name: 'call_throw_string',
    code: 'TOOL_THREW',
    message: 'out of cheese',
  },
  {
    behaviour: 'throws a plain object',
    file: 'call-throw-object.js',
    name: 'call_throw_object',
    code: 'TOOL_THREW',
    message: 'the tool threw {"status":503,"reason":"busy"}',
  },
  {
    behaviour: 'rejects',
    file: 'call-rejects.js',
    name: 'call_rejects',
    code: 'TOOL_THREW',
    message: 'rejected on purpose',
  },
  {
    behaviour: 'loops forever',
    file: 'call-infinite-loop.js',
    name: 'call_infinite_loop',
    code: 'TOOL_TIMEOUT',
    message: 'tool timed out after 300 ms',
  },
  {
    behaviour: 'blocks forever in Atomics.wait',
    file: 'call-atomics-wait.js',
    name: 'call_atomics_wait',
    code: 'TOOL_TIMEOUT',
    message: 'tool timed out after 300 ms',
  },
  {
    behaviour: 'exhausts the heap',
    file: 'call-heap-bomb.js',
    name: 'call_heap_bomb',
    code: 'TOOL_OUT_OF_MEMORY',
    message: 'the tool ran out of memory (heap limit 128 MB)',
  },
  {
    behaviour: 'recurses until the stack overflows',
    file: 'call-deep-recursion.js',
    name: 'call_deep_recursion',
    code: 'TOOL_STACK_OVERFLOW',
    message: 'Maximum call stack size exceeded',
  },
  {
    behaviour: 'calls process.exit',
    file: 'call-exit.js',
    name: 'call_exit',
    code: 'TOOL_EXITED',
    message: 'the tool called process.exit(3)',
  },
  {
    behaviour: 'returns a function',
    file: 'call-returns-function.js',
    name: 'call_returns_function',
    code: 'TOOL_BAD_RESULT',
    message: "the tool returned a function, which can't be sent to the model",
  },
  {
    behaviour: 'returns a symbol',
    file: 'call-returns-symbol.js',
    name: 'call_returns_symbol',
    code: 'TOOL_BAD_RESULT',
    message: "the tool returned a symbol, which can't be sent to the model",
  },
  {
    behaviour: 'returns a Proxy',
    file: 'call-returns-proxy.js',
    name: 'call_returns_proxy',
    code: 'TOOL_BAD_RESULT',
    message: "the tool returned a Proxy, which can't be sent to the model",
  },
  {
    behaviour: 'leaves an unhandled rejection behind when it returns',
    file: 'call-unhandled-rejection.js',
    name: 'call_unhandled_rejection',
    code: 'TOOL_UNHANDLED_REJECTION',
    message: 'unhandled rejection: nobody caught me',
  },
  {
    behaviour: 'calls process.kill(process.pid)',
    file: 'call-process-kill.js',
    name: 'call_process_kill',
    code: 'TOOL_THREW',
    message: 'process.kill is not available to tools in toolhost',
  },
];

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
