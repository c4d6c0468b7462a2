/**
 * Worker starts and terminations racing, many rounds, in every tier: workers ended at their timeout
 * while a tool require()s ES modules, replacement workers starting while others are ended, and hosts
 * closed while their workers are still loading. Where require(esm) was on, a worker terminated while
 * Node built an ES module's require() facade aborted the whole process (the host), so these rounds
 * pass only if no worker ever loads an ES module through require().
 */
import { describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../dist/src/index.js';
import {
  answered,
  expectHostFine,
  failed,
  fixtureModule,
  loadEcho,
  useHosts,
} from './support/host-harness.js';

const makeHost = useHosts();

const TIERS = ['worker', 'strict', 'process'] as const;
/** Rounds of each stress: bounded, so a loaded 2-core machine runs them in well under a minute a tier. */
const TIMEOUT_ROUNDS = 8;
const CLOSE_ROUNDS = 6;

const timedOut = failed('TOOL_TIMEOUT', 'tool timed out after 150 ms');

describe.each(TIERS)('worker starts and terminations racing (%s tier)', (isolation) => {
  it('a tool cannot require() an ES module: it gets ERR_REQUIRE_ESM, as where require(esm) is off', async () => {
    const { host } = await makeHost({ isolation });
    await host.load(fixtureModule('call-require-esm-once.js'));

    expect(await host.call('call_require_esm_once', {})).toStrictEqual(
      answered('require() of an ES module threw ERR_REQUIRE_ESM'),
    );
  });

  it(`a tool that require()s ES modules until its timeout ends its worker, ${TIMEOUT_ROUNDS} rounds of two at once beside a third waiting: every call times out, the host lives, the next call and another package are fine`, async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 2, timeoutGraceMs: 20 });
    await loadEcho(host);
    await host.load(fixtureModule('call-require-esm-loop.js'));
    await host.load(fixtureModule('call-require-esm-once.js'));

    for (let round = 0; round < TIMEOUT_ROUNDS; round += 1) {
      // Three calls on two threads: the third starts on a worker started while another is ended.
      const outcomes = await Promise.all([
        host.call('call_require_esm_loop', {}),
        host.call('call_require_esm_loop', {}),
        host.call('call_require_esm_loop', {}),
        host.call('echo', { text: `round ${round}` }),
      ]);
      expect(outcomes.slice(0, 3)).toStrictEqual([timedOut, timedOut, timedOut]);
      expect(outcomes[3]?.isError).toBe(false);
    }
    expect(await host.call('call_require_esm_once', {})).toStrictEqual(
      answered('require() of an ES module threw ERR_REQUIRE_ESM'),
    );
    await expectHostFine(host);
  });

  it(`${CLOSE_ROUNDS} hosts closed as soon as their first call answers, while their other workers are still starting: every call answers once, as itself or HOST_CLOSED`, async () => {
    for (let round = 0; round < CLOSE_ROUNDS; round += 1) {
      const { host } = await makeHost({ isolation, maxThreadsPerPool: 4 });
      await loadEcho(host);
      const settled: ToolOutcome[] = [];
      const calls = Array.from({ length: 4 }, (_, index) =>
        host.call('echo', { text: `call ${index}` }).then((outcome) => {
          settled.push(outcome);
          return outcome;
        }),
      );
      // The handshake point: one worker has loaded and answered; the pool started the others with it.
      await Promise.race(calls);
      await host.close();
      const outcomes = await Promise.all(calls);
      expect(settled).toHaveLength(4);
      for (const outcome of outcomes) {
        if (outcome.isError) {
          expect(outcome.error?.code).toBe('HOST_CLOSED');
        } else {
          expect(outcome.content).toHaveLength(1);
        }
      }
      expect(outcomes.some((outcome) => !outcome.isError)).toBe(true);
    }
    // The test process is the host: it is still here, and a new host serves calls.
    const { host } = await makeHost({ isolation });
    await loadEcho(host);
    await expectHostFine(host);
  });
});
