/**
 * A tool that fills its heap inside one call into V8 (`new Array(1e8).fill(0)`: 800 MB asked at once
 * against a call's 128 MB). A worker's heap limit can't stop it there, and V8 ends the whole process
 * it runs in (Node's `resourceLimits` are best-effort: nodejs/node#47224). Each host runs in a
 * process of its own (test/support/process-host.mjs): in the worker and strict tiers V8 ends that
 * process, which docs/isolation.md's table says is not contained; the process tier contains it, and its
 * host goes on to the next call.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type HostProcessRun, runHostProcess } from './support/host-process.js';

const HUGE = fileURLToPath(new URL('../fixtures/huge-allocation', import.meta.url));
const ECHO = fileURLToPath(new URL('../fixtures/modules/echo.js', import.meta.url));

function runHost(isolation: string): Promise<HostProcessRun> {
  return runHostProcess({
    options: { isolation },
    packages: [HUGE, ECHO],
    calls: [
      { name: 'huge_fill', args: {} },
      { name: 'echo', args: { text: 'after' } },
    ],
  });
}

/** Each call's outcome, as the host printed it. */
function outcomes(
  run: HostProcessRun,
): Array<{ isError: boolean; error?: { code: string; message: string } }> {
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('RESULT '))
    .map((line) => JSON.parse(line.slice('RESULT '.length)));
}

describe('a tool that fills its heap in one call into V8', () => {
  it.each(['worker', 'strict'])(
    "isolation: '%s' is not contained: V8 ends the host's whole process before the call answers",
    async (isolation) => {
      const run = await runHost(isolation);

      expect(run.signal === 'SIGABRT' || run.code === 134).toBe(true);
      expect(run.stderr).toContain('JavaScript heap out of memory');
      expect(outcomes(run)).toEqual([]);
    },
  );

  it("isolation: 'process' contains it: the call answers TOOL_OUT_OF_MEMORY and the next call runs", async () => {
    const run = await runHost('process');

    expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    const [filled, after] = outcomes(run);
    expect(filled?.error).toEqual({
      code: 'TOOL_OUT_OF_MEMORY',
      message: 'the tool ran out of memory (heap limit 128 MB)',
    });
    expect(after?.isError).toBe(false);
    expect(run.stdout).toContain('CLOSED');
  });
});
