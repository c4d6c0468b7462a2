/**
 * A storm: hundreds of concurrent calls across three packages, a fraction of them hostile (exit,
 * throw, loop past the timeout, run out of memory). Every call is answered exactly once with its own
 * outcome, and the host's memory shows no growth from one storm to the next.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { ToolHost, ToolOutcome } from '../dist/src/index.js';
import { answered, failed, hostPackage, useHosts } from './support/host-harness.js';

const makeHost = useHosts();

const CALLS_PER_STORM = 300;
const HEAP_MB = 64;

interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
  expected: ToolOutcome;
}

/** One call in ten is hostile, in turn an exit, a throw, a loop past its timeout and a heap bomb. */
function plan(storm: number): PlannedCall[] {
  const packages = ['alpha', 'beta', 'gamma'];
  return Array.from({ length: CALLS_PER_STORM }, (_, index) => {
    const n = storm * 1_000 + index;
    if (index % 10 === 9) {
      switch (((index - 9) / 10) % 4) {
        case 0:
          return {
            name: 'alpha_exit',
            args: {},
            expected: failed('TOOL_EXITED', 'the tool called process.exit(9)'),
          };
        case 1:
          return { name: 'alpha_throw', args: { n }, expected: failed('TOOL_THREW', `alpha failed on ${n}`) };
        case 2:
          return {
            name: 'beta_loop',
            args: {},
            expected: failed('TOOL_TIMEOUT', 'tool timed out after 300 ms'),
          };
        default:
          return {
            name: 'gamma_oom',
            args: {},
            expected: failed('TOOL_OUT_OF_MEMORY', `the tool ran out of memory (heap limit ${HEAP_MB} MB)`),
          };
      }
    }
    const pkg = packages[index % 3] as string;
    return {
      name: `${pkg}_double`,
      args: { n },
      expected: answered(JSON.stringify({ pkg, n, doubled: n * 2 })),
    };
  });
}

/** Runs one storm; resolves with how many times each call was answered, and the outcomes. */
async function storm(
  host: ToolHost,
  number: number,
): Promise<{ planned: PlannedCall[]; outcomes: ToolOutcome[] }> {
  const planned = plan(number);
  const answers = new Array<number>(planned.length).fill(0);
  const outcomes = await Promise.all(
    planned.map(async ({ name, args }, index) => {
      const outcome = await host.call(name, args, { callId: `storm_${number}_${index}` });
      answers[index] = (answers[index] ?? 0) + 1;
      return outcome;
    }),
  );
  expect(answers.every((count) => count === 1)).toBe(true);
  return { planned, outcomes };
}

/** A full GC when the runtime allows one (vitest does not pass --expose-gc). */
function collectGarbage(): void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) {
    exposed();
    return;
  }
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function heapUsedMb(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

describe('a storm of calls across packages', () => {
  it('answers every call exactly once with its own outcome, and the host does not grow from storm to storm', async () => {
    const { host, logger } = await makeHost({ maxThreadsPerPool: 2, callHeapMb: HEAP_MB });
    for (const name of ['storm-alpha', 'storm-beta', 'storm-gamma']) {
      const report = await host.load(hostPackage(name));
      expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
    }
    const outputs: unknown[] = [];
    host.on('output', (event) => outputs.push(event));

    const baselineHeapMb = heapUsedMb();

    // The first storm warms up: pools, workers, JIT and caches reach their working size.
    const runs = [];
    for (let number = 1; number <= 3; number++) {
      const { planned, outcomes } = await storm(host, number);
      for (const [index, outcome] of outcomes.entries()) {
        const expected = planned[index]?.expected;
        if (JSON.stringify(outcome) !== JSON.stringify(expected)) {
          expect({ index, name: planned[index]?.name, outcome }).toStrictEqual({
            index,
            name: planned[index]?.name,
            outcome: expected,
          });
        }
      }
      runs.push({ heapMb: heapUsedMb(), rssMb: process.memoryUsage().rss / 1024 / 1024 });
    }

    const [, second, third] = runs as [
      unknown,
      { heapMb: number; rssMb: number },
      { heapMb: number; rssMb: number },
    ];
    // Loose bounds: a leak of even a few KB per call (a kept outcome, a listener, a port) would add
    // tens of MB over 300 calls; ordinary noise stays well under these.
    expect(third.heapMb - second.heapMb).toBeLessThan(25);
    expect(third.rssMb - second.rssMb).toBeLessThan(300);
    expect(third.heapMb - baselineHeapMb).toBeLessThan(50);
    expect(logger.lines).toEqual([]);
    expect(outputs).toEqual([]);

    // And the host is fine after the storms.
    expect(await host.call('beta_double', { n: 21 })).toStrictEqual(
      answered(JSON.stringify({ pkg: 'beta', n: 21, doubled: 42 })),
    );
  }, 300_000);
});
