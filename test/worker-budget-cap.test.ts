/**
 * The worker budget's cap, counted from outside the budget: the worker threads piscina really made
 * and that have not exited (thread tiers), or the host's child processes that are alive (the process
 * tier: a package process or the spare, each the host's direct child), read at every moment the
 * count can grow (each `workers` event, each answer). A caller keeps more calls in flight than
 * there are places, spread over more packages than places, with calls that end their worker among
 * them, so workers start, end, crash and are replaced all the time.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { type IsolationTier, outcomeText } from '../dist/src/index.js';
import { expectHostFine, loadEcho, useHosts } from './support/host-harness.js';
import { liveChildren, liveThreads } from './support/live-workers.js';
import { tempDir, toolSource, writePackage } from './support/tool-packages.js';

const TIERS: Array<{ tier: IsolationTier; packages: number; maxWorkers: number; calls: number }> = [
  { tier: 'worker', packages: 6, maxWorkers: 3, calls: 240 },
  { tier: 'strict', packages: 6, maxWorkers: 3, calls: 240 },
  { tier: 'process', packages: 4, maxWorkers: 3, calls: 80 },
];

describe.each(TIERS)("the cap, isolation '$tier'", ({ tier, packages, maxWorkers, calls }) => {
  const makeHost = useHosts();

  it(`never runs more than maxWorkers (${maxWorkers}) workers at once, counted from outside the budget, while calls spread over ${packages} packages start, end and crash workers`, async () => {
    const { host } = await makeHost({
      maxWorkers,
      maxThreadsPerPool: 1,
      isolation: tier,
      timeoutGraceMs: 20,
    });
    // What the budget counts (the process tier's spare among it), from the first event on.
    let counted = 0;
    host.on('workers', (event) => {
      counted = event.workers;
    });
    const root = await tempDir('toolhost-budget-cap-');
    for (let index = 0; index < packages; index += 1) {
      const report = await host.load(
        await writePackage(join(root, `p${index}`), {
          'echo.js': toolSource(`echo_${index}`, `'echo ${index}'`),
          'exits.js': toolSource(`exits_${index}`, 'process.exit(3)'),
        }),
      );
      expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
    }
    // Only what runs calls from now on: the reads' throwaway workers and processes are gone. A
    // package's read process is ended once the package is read, and may still be exiting when
    // load() has answered (it is no unit of the budget's): counting starts once it is gone.
    if (tier === 'process') {
      await vi.waitFor(() => expect(liveChildren()).toBeLessThanOrEqual(counted), { timeout: 30_000 });
    }
    const baseline = tier === 'process' ? 0 : liveThreads.now;
    const live = () => (tier === 'process' ? liveChildren() : liveThreads.now - baseline);
    let mostLive = 0;
    let mostCounted = 0;
    host.on('workers', (event) => {
      mostLive = Math.max(mostLive, live());
      mostCounted = Math.max(mostCounted, event.workers);
    });
    const answers: string[] = [];
    let next = 0;
    const inFlight = maxWorkers * 3;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < calls) {
          const index = next;
          next += 1;
          const pkg = index % packages;
          const exits = index % 10 === 9;
          const outcome = await host.call(exits ? `exits_${pkg}` : `echo_${pkg}`, {});
          mostLive = Math.max(mostLive, live());
          answers[index] = exits ? (outcome.error?.code ?? 'answered') : outcomeText(outcome);
        }
      }),
    );
    expect(answers).toEqual(
      Array.from({ length: calls }, (_, index) =>
        index % 10 === 9 ? 'TOOL_EXITED' : `echo ${index % packages}`,
      ),
    );
    expect(mostCounted).toBeGreaterThan(0);
    expect(mostCounted).toBeLessThanOrEqual(maxWorkers);
    expect(mostLive).toBeGreaterThan(0);
    expect(mostLive).toBeLessThanOrEqual(maxWorkers);
    await loadEcho(host);
    await expectHostFine(host);
  }, 240_000);
});
