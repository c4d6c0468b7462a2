/**
 * What crosses back from a call besides its answer, in every tier: progress in order before the
 * reply, console output captured and capped, and an abort that frees the worker for the next call.
 */
import { describe, expect, it } from 'vitest';
import type { ToolProgressEvent } from '../dist/src/index.js';
import { ALL_TIERS, withoutTierNotice } from './support/boundary.js';
import { answered, collect, failed, fixtureModule, useHosts } from './support/host-harness.js';

const makeHost = useHosts();

describe.each(ALL_TIERS)("isolation: '%s', what crosses back", (isolation) => {
  it("emit reaches the host's 'progress' event, in order, before the call answers", async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
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
    const { host, logger } = await makeHost({ isolation, maxLogChars });
    await host.load(fixtureModule('call-console-flood.js'));
    const outputs = collect(host, 'output');
    const lines = logger.lines.length;

    expect(await host.call('call_console_flood', {}, { callId: 'noisy_1' })).toStrictEqual(
      answered('printed'),
    );

    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.logs[0]).toStrictEqual({ stream: 'stderr', text: 'flood starts on stderr\n' });
    expect(outputs[0]?.logs.map((log) => log.text).join('')).toHaveLength(maxLogChars);
    expect(outputs[0]?.droppedChars).toBeGreaterThan(0);
    expect(withoutTierNotice(logger.lines.slice(lines))).toEqual([]);
  });

  it('a caller that aborts gets CALL_ABORTED, and the next call runs on a new worker', async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
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
