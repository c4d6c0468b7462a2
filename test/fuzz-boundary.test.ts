/**
 * Property-based tests of the worker boundary, end to end, in every isolation tier: a hostile tool
 * (fixtures/fuzz/forger.js) returns, throws and emits generated hostile values, and forges whole
 * replies by taking over piscina's handler in its worker; generated declarations are read. For every case the host lives,
 * the call answers once with a documented code (or succeeds within the caps), and another package's
 * tool still answers. `FUZZ_RUNS` raises the case count.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolHost, ToolOutcome } from '../dist/src/index.js';
import { expectHostFine, loadEcho, useHosts } from './support/host-harness.js';
import {
  declarationSource,
  FUZZ_RUNS,
  forgerCase,
  forgerCaseInHeap,
  fuzzTimeout,
} from './support/hostile-arbitraries.js';

const FORGER = fileURLToPath(new URL('../fixtures/fuzz/', import.meta.url));
const MAX_RESULT_BYTES = 1024 * 1024;

/** Every code a call may answer with (docs/error-codes.md). */
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

/** Every reason a module may be left out for (docs/error-codes.md, "Why a module is left out"). */
const LEFT_OUT_CODES = new Set([
  'IMPORT_FAILED',
  'DECLARATION_THREW',
  'DECLARATION_INVALID',
  'DECLARATION_NOT_PLAIN',
  'DECLARATION_TIMEOUT',
  'DECLARATION_OUT_OF_MEMORY',
  'DECLARATION_EXITED',
  'DECLARATION_CRASHED',
]);

function expectWellFormed(outcome: ToolOutcome): void {
  if (outcome.isError && outcome.error !== undefined) {
    expect(CALL_CODES.has(outcome.error.code), `undocumented code ${outcome.error.code}`).toBe(true);
    expect(typeof outcome.error.message).toBe('string');
    // Worker text reaches the caller as data: no terminal escapes.
    expect(outcome.error.message).not.toContain('\u001b');
  }
  let bytes = 0;
  for (const block of outcome.content) {
    expect(['text', 'image']).toContain(block.type);
    bytes +=
      block.type === 'text'
        ? Buffer.byteLength(block.text)
        : 'source' in block
          ? block.source.data.length
          : Buffer.byteLength(JSON.stringify(block));
  }
  if (outcome.details !== undefined) bytes += Buffer.byteLength(JSON.stringify(outcome.details));
  // What crossed is bounded by the cap (the outcome's text is cut further, to the output budget).
  expect(bytes).toBeLessThanOrEqual(MAX_RESULT_BYTES);
}

// The same property in every tier: in the process tier the package's process parses the worker's
// messages, and the host parses what that process sends again. Only the process tier gets the cases
// that fill a call's heap: in the other two a worker that fills it shares the host's process, and
// Node ends such a worker on a best-effort basis only (docs/isolation.md).
describe.each(['worker', 'strict', 'process'] as const)(
  'the %s tier under generated hostile values',
  (isolation) => {
    const makeHost = useHosts();

    it(
      'every forged reply, hostile result, throw and progress answers once with a documented code, and the host serves on',
      async () => {
        const { host } = await makeHost({
          isolation,
          maxResultBytes: MAX_RESULT_BYTES,
          maxThreadsPerPool: 1,
        });
        await loadEcho(host);
        await host.load(FORGER);
        const progress: unknown[] = [];
        host.on('progress', (event) => progress.push(event));
        await fc.assert(
          fc.asyncProperty(isolation === 'process' ? forgerCase : forgerCaseInHeap, async (testCase) => {
            progress.length = 0;
            const outcome = await host.call('forger', testCase as Record<string, unknown>);
            expectWellFormed(outcome);
            const afterAnswer = progress.length;
            await expectHostFine(host);
            // Progress is bounded per call, and none is delivered once the call has answered.
            expect(afterAnswer).toBeLessThanOrEqual(1000);
            expect(progress.length).toBe(afterAnswer);
          }),
          { numRuns: FUZZ_RUNS },
        );
      },
      fuzzTimeout(1, 2_000),
    );
  },
);

describe('declarations under generated hostile fields', () => {
  const makeHost = useHosts();
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'toolhost-fuzz-decl-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it(
    'every generated declaration is offered or left out with a documented reason, and the host serves on',
    async () => {
      const { host } = await makeHost({ readTimeoutMs: 10_000 });
      await loadEcho(host);
      let index = 0;
      await fc.assert(
        fc.asyncProperty(declarationSource, async (source) => {
          const path = join(folder, `module-${index++}.js`);
          await writeFile(path, source);
          const report = await (host as ToolHost).load(path);
          for (const status of report.modules) {
            if (status.state === 'offered') {
              expect(host.list().some((tool) => tool.name === status.name)).toBe(true);
            } else {
              expect(status.state).toBe('left-out');
              expect(LEFT_OUT_CODES.has(status.code ?? ''), `undocumented code ${status.code}`).toBe(true);
              expect(status.reason).not.toContain('\u001b');
            }
          }
          host.unload(path);
          await expectHostFine(host);
        }),
        { numRuns: Math.max(5, Math.ceil(FUZZ_RUNS / 2)) },
      );
    },
    fuzzTimeout(0.5, 2_000),
  );
});
