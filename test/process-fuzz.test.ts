/**
 * The worker boundary's property test (fuzz-boundary.test.ts) against the process tier: the forger
 * fixture returns, throws and emits generated hostile values and forges whole replies by taking over
 * piscina's handler in its worker, now inside a package's process whose messages the host parses
 * again. For every case the host lives, the call answers once with a documented code (or succeeds
 * within the caps), and another package's tool still answers. `FUZZ_RUNS` raises the case count.
 */
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../dist/src/index.js';
import { expectHostFine, loadEcho, useHosts } from './support/host-harness.js';
import { FUZZ_RUNS, forgerCase } from './support/hostile-arbitraries.js';

const FORGER = fileURLToPath(new URL('../fixtures/fuzz/', import.meta.url));
const MAX_RESULT_BYTES = 1024 * 1024;

/** Every code a call may answer with (README, "Error codes"). */
const CALL_CODES = new Set([
  'TOOL_THREW',
  'TOOL_ACCESS_DENIED',
  'TOOL_ERROR_RESULT',
  'TOOL_TIMEOUT',
  'TOOL_EXITED',
  'TOOL_OUT_OF_MEMORY',
  'TOOL_STACK_OVERFLOW',
  'TOOL_CRASHED',
  'TOOL_UNHANDLED_REJECTION',
  'TOOL_BAD_RESULT',
  'TOOL_LOAD_FAILED',
]);

function expectWellFormed(outcome: ToolOutcome): void {
  if (outcome.isError && outcome.error !== undefined) {
    expect(CALL_CODES.has(outcome.error.code), `undocumented code ${outcome.error.code}`).toBe(true);
    expect(outcome.error.message).not.toContain('\u001b');
  }
  let bytes = 0;
  for (const block of outcome.content) {
    expect(['text', 'image']).toContain(block.type);
    bytes += block.type === 'text' ? Buffer.byteLength(block.text) : block.source.data.length;
  }
  if (outcome.details !== undefined) bytes += Buffer.byteLength(JSON.stringify(outcome.details));
  expect(bytes).toBeLessThanOrEqual(MAX_RESULT_BYTES);
}

describe("isolation: 'process', the boundary under generated hostile values", () => {
  const makeHost = useHosts();

  it('every forged reply, hostile result, throw and progress answers once with a documented code, and the host serves on', async () => {
    const { host } = await makeHost({
      isolation: 'process',
      maxResultBytes: MAX_RESULT_BYTES,
      maxThreadsPerPool: 1,
    });
    await loadEcho(host);
    await host.load(FORGER);
    const progress: unknown[] = [];
    host.on('progress', (event) => progress.push(event));
    await fc.assert(
      fc.asyncProperty(forgerCase, async (testCase) => {
        progress.length = 0;
        const outcome = await host.call('forger', testCase as Record<string, unknown>);
        expectWellFormed(outcome);
        const afterAnswer = progress.length;
        await expectHostFine(host);
        expect(afterAnswer).toBeLessThanOrEqual(1000);
        expect(progress.length).toBe(afterAnswer);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });
});
