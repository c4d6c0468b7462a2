/**
 * What a running call gets and when it runs: its ctx (ids, withheld names, a fresh tmpDir removed
 * after, a signal aborted at the timeout, progress to the host), input checked before it runs, and a
 * timeout that counts from when it starts running, not while it waits.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolProgressEvent } from '../dist/src/index.js';
import {
  answered,
  collect,
  expectHostFine,
  failed,
  fixtureModule,
  jsonOf,
  loadEcho,
  useHosts,
} from './support/host-harness.js';

const makeHost = useHosts();

interface ContextReport {
  callId: string;
  sessionId: string;
  withheld: string[];
  dataDir: string;
  tmpDir: string;
  tmpDirExisted: boolean;
  entriesBefore: string[];
  signalAborted: boolean;
}

describe('ctx', () => {
  it('carries the callId, sessionId and withheld names the caller gave, and the host dataDir', async () => {
    const { host, dataDir } = await makeHost();
    await host.load(fixtureModule('call-context.js'));

    const report = jsonOf(
      await host.call(
        'call_context',
        {},
        { callId: 'toolu_01ABC', sessionId: 'session-7', withheld: ['delete_everything'] },
      ),
    ) as ContextReport;

    expect(report).toStrictEqual({
      callId: 'toolu_01ABC',
      sessionId: 'session-7',
      withheld: ['delete_everything'],
      dataDir,
      tmpDir: report.tmpDir,
      tmpDirExisted: true,
      entriesBefore: [],
      signalAborted: false,
    });
  });

  it('defaults: a fresh callId per call, session "default", nothing withheld', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('call-context.js'));

    const first = jsonOf(await host.call('call_context', {})) as ContextReport;
    const second = jsonOf(await host.call('call_context', {})) as ContextReport;

    expect([first.sessionId, second.sessionId]).toEqual(['default', 'default']);
    expect([first.withheld, second.withheld]).toEqual([[], []]);
    expect(first.callId).toMatch(/\S/);
    expect(second.callId).not.toBe(first.callId);
  });

  it('tmpDir is fresh for every call and removed when the call ends', async () => {
    const { host } = await makeHost({ maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-context.js'));

    const first = jsonOf(await host.call('call_context', {})) as ContextReport;
    const second = jsonOf(await host.call('call_context', {})) as ContextReport;

    expect(second.tmpDir).not.toBe(first.tmpDir);
    // Each call found its own directory empty, though the previous call left a file in its own.
    expect([first.entriesBefore, second.entriesBefore]).toEqual([[], []]);
    expect(existsSync(first.tmpDir)).toBe(false);
    expect(existsSync(second.tmpDir)).toBe(false);
  });

  it('signal aborts at the timeout with a TimeoutError, while the call answers "tool timed out after N ms"', async () => {
    // One worker and a long grace: the tool sees the abort, finishes, and the next call of the same
    // worker reports what it saw.
    const { host } = await makeHost({ maxThreadsPerPool: 1, timeoutGraceMs: 30_000 });
    await loadEcho(host);
    await host.load(fixtureModule('call-abort-probe.js'));

    expect(await host.call('call_abort_probe', { report: false })).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 200 ms'),
    );
    expect(jsonOf(await host.call('call_abort_probe', { report: true }))).toStrictEqual({
      aborted: true,
      reasonName: 'TimeoutError',
      reasonMessage: 'tool timed out after 200 ms',
    });
    await expectHostFine(host);
  });

  it("emit reaches the host's 'progress' event, in order, before the call answers", async () => {
    const { host } = await makeHost({ maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-progress.js'));
    const progress = collect(host, 'progress');

    // Several times: progress sent just before returning must not lose a race with the reply.
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
});

describe.each(['worker', 'strict', 'process'] as const)(
  "isolation: '%s', a call's immediates",
  (isolation) => {
    it('an immediate the tool schedules as it returns runs within its call, not cleared with its timers', async () => {
      const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
      await host.load(fixtureModule('call-leaves-immediate.js'));

      // One worker (or process): each call sees every earlier call's immediate run.
      for (const count of [0, 1, 2]) {
        expect(await host.call('call_leaves_immediate', {})).toStrictEqual(
          answered(`earlier immediates run: ${count}`),
        );
      }
    });
  },
);

describe.each(['worker', 'strict', 'process'] as const)("isolation: '%s', ctx", (isolation) => {
  it("can't be changed for later calls through its prototype: each attempt is refused, and the next call's ctx works", async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-ctx-tamper.js'));
    await loadEcho(host);
    const progress = collect(host, 'progress');

    // One worker (or process): the second call runs where the first tampered.
    for (const callId of ['tamper_1', 'tamper_2']) {
      expect(jsonOf(await host.call('call_ctx_tamper', {}, { callId }))).toStrictEqual({
        tried: ['refused', 'refused', 'refused'],
        keys: ['sessionId', 'callId', 'dataDir', 'withheld'],
        ownTmpDir: true,
      });
      expect(progress.splice(0)).toStrictEqual([{ name: 'call_ctx_tamper', callId, data: { step: 1 } }]);
    }
    await expectHostFine(host);
  });
});

describe.each(['worker', 'strict', 'process'] as const)(
  "isolation: '%s', a 'progress' listener that throws",
  (isolation) => {
    it('loses only the message it threw on: the call answers at once, the next call and its progress are fine', async () => {
      const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
      await host.load(fixtureModule('call-progress.js'));
      let throwing = true;
      const delivered: unknown[] = [];
      host.on('progress', (event) => {
        delivered.push(event.data);
        if (throwing) throw new Error('a screen that broke');
      });

      expect(await host.call('call_progress', {})).toStrictEqual(answered('done'));
      expect(delivered).toStrictEqual([
        { step: 1, of: 2 },
        { step: 2, of: 2 },
      ]);

      throwing = false;
      delivered.length = 0;
      expect(await host.call('call_progress', {})).toStrictEqual(answered('done'));
      expect(delivered).toHaveLength(2);
      await loadEcho(host);
      await expectHostFine(host);
    });
  },
);

describe('input that fails the schema', () => {
  it('answers INVALID_INPUT with what is wrong, and the tool never runs', async () => {
    const { host, dataDir } = await makeHost();
    await host.load(fixtureModule('call-validated-input.js'));
    const progress = collect(host, 'progress');
    const marker = join(dataDir, 'validated-input-ran');
    const invalid = (lines: string[]) =>
      failed(
        'INVALID_INPUT',
        `the input does not match the tool's parameterSchema:\n${lines.map((line) => `- ${line}`).join('\n')}`,
      );

    expect(await host.call('call_validated_input', { count: 'many' })).toStrictEqual(
      invalid(['/count must be integer']),
    );
    expect(await host.call('call_validated_input', { count: 0, extra: 1 })).toStrictEqual(
      invalid(['the input must NOT have additional properties (extra)', '/count must be >= 1']),
    );
    expect(await host.call('call_validated_input', {})).toStrictEqual(
      invalid(["the input must have required property 'count'"]),
    );
    expect(await host.call('call_validated_input', 'not an object')).toStrictEqual(
      invalid(['the input must be object']),
    );
    expect(progress).toEqual([]);
    expect(existsSync(marker)).toBe(false);

    // The same probes see a valid call run.
    expect(await host.call('call_validated_input', { count: 2 })).toStrictEqual(answered('counted 2'));
    expect(progress.map((event) => event.data)).toEqual([{ ran: true, count: 2 }]);
    expect(existsSync(marker)).toBe(true);
  });
});

describe('the timeout', () => {
  it('counts from when a call starts running, not while it waits for a worker', async () => {
    const { host } = await makeHost({ maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-nap.js'));

    // The first call holds the only worker for 1.5 s; the second waits that long in the queue,
    // over its own 1 s limit, but runs in well under it once it starts.
    const first = host.call('call_nap', { ms: 1_500 });
    const second = host.call('call_nap', { ms: 0 }, { timeoutMs: 1_000 });

    expect(await first).toStrictEqual(answered('napped 1500 ms'));
    expect(await second).toStrictEqual(answered('napped 0 ms'));
  });

  it("is the tool's own timeoutMs when the caller's cap is higher", async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('call-infinite-loop.js'));

    expect(host.list()).toEqual([expect.objectContaining({ name: 'call_infinite_loop', timeoutMs: 300 })]);
    expect(await host.call('call_infinite_loop', {}, { timeoutMs: 60_000 })).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 300 ms'),
    );
  });
});
