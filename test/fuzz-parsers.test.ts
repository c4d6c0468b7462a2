/**
 * Property-based tests of the host's parsers of worker messages, on their own: whatever a structured
 * clone can produce (Maps, Dates, typed arrays, BigInts, sparse arrays, null prototypes, deep
 * nesting, forged replies), each parser returns a verdict and never throws, and what it accepts is
 * well formed and within the caps. The end-to-end suite (fuzz-boundary) sends such values through
 * real workers; this one runs ten times as many cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseCallReply,
  parseProgressData,
  parseWorkerMessage,
} from '../dist/src/boundary/parse-call-reply.js';
import { parseReadReply } from '../dist/src/boundary/parse-read-reply.js';
import { checkPlainData } from '../dist/src/boundary/plain-data.js';
import { FUZZ_RUNS, fuzzTimeout } from './support/hostile-arbitraries.js';

const limits = { maxResultBytes: 65_536, maxLogChars: 1_024 };
const numRuns = FUZZ_RUNS * 10;

const anything = fc.anything({
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withSparseArray: true,
  withNullPrototype: true,
  withObjectString: true,
  withBoxedValues: true,
  maxDepth: 4,
});

/** What reaches the host: a structured clone (a value that can't be cloned never arrives). */
function cloned(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

function nested(depth: number, arrays: boolean): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) value = arrays ? [value] : { nested: value };
  return value;
}

const reply = fc.record(
  {
    ok: fc.oneof(fc.boolean(), anything),
    content: fc.oneof(
      fc.array(
        fc.record({ type: fc.constantFrom('text', 'image', 'html'), text: fc.oneof(fc.string(), anything) }),
      ),
      anything,
    ),
    isError: fc.oneof(fc.boolean(), anything),
    cutBytes: fc.oneof(fc.nat(), anything),
    logs: fc.oneof(
      fc.array(fc.record({ stream: fc.constantFrom('stdout', 'stderr', 'x'), text: fc.string() })),
      anything,
    ),
    droppedLogChars: fc.oneof(fc.nat(), anything),
    progressSent: fc.oneof(fc.nat(2000), anything),
    error: fc.oneof(
      fc.record({ code: fc.constantFrom('TOOL_THREW', 'HOST_CLOSED', 'X'), message: anything }),
      anything,
    ),
    details: fc.oneof(
      fc.nat(80).map((depth) => nested(depth, depth % 2 === 0)),
      anything,
    ),
  },
  { requiredKeys: [] },
);

const worker = fc.oneof(
  anything,
  reply,
  fc.nat(3000).map((depth) => nested(depth, true)),
);

describe('the host parsers of worker messages', () => {
  it(
    'parseCallReply returns a verdict for any value, and what it accepts is well formed and within the cap',
    () => {
      fc.assert(
        fc.property(worker, (value) => {
          const parsed = parseCallReply(cloned(value), limits);
          if (!parsed.ok) {
            expect(typeof parsed.reason).toBe('string');
            return;
          }
          const { value: accepted } = parsed;
          expect(Array.isArray(accepted.logs)).toBe(true);
          expect(accepted.logs.reduce((sum, log) => sum + log.text.length, 0)).toBeLessThanOrEqual(
            limits.maxLogChars,
          );
          if (accepted.ok) {
            let bytes = 0;
            for (const block of accepted.content) {
              expect(['text', 'image']).toContain(block.type);
              bytes +=
                block.type === 'text'
                  ? Buffer.byteLength(block.text)
                  : 'source' in block
                    ? block.source.data.length
                    : Buffer.byteLength(JSON.stringify(block));
            }
            expect(bytes).toBeLessThanOrEqual(limits.maxResultBytes);
          } else {
            expect([
              'TOOL_THREW',
              'TOOL_ACCESS_DENIED',
              'TOOL_STACK_OVERFLOW',
              'TOOL_TIMEOUT',
              'TOOL_BAD_RESULT',
              'TOOL_LOAD_FAILED',
            ]).toContain(accepted.error.code);
          }
        }),
        { numRuns },
      );
    },
    fuzzTimeout(10, 5),
  );

  it(
    'parseWorkerMessage, parseProgressData, parseReadReply and checkPlainData never throw',
    () => {
      const message = fc.oneof(
        worker,
        fc.record({
          tag: fc.constant('toolhost:worker'),
          type: fc.constantFrom('hello', 'progress', 'fault', 'x'),
          taskId: anything,
          data: anything,
          error: anything,
          logs: anything,
          threadId: anything,
          osThreadId: anything,
        }),
      );
      fc.assert(
        fc.property(message, (value) => {
          const clone = cloned(value);
          parseWorkerMessage(clone, limits.maxLogChars);
          parseProgressData(clone);
          const read = parseReadReply(clone);
          expect(typeof read.ok).toBe('boolean');
          const plain = checkPlainData(clone, { maxDepth: 64, maxBytes: 65_536 });
          expect(typeof plain.ok).toBe('boolean');
        }),
        { numRuns },
      );
    },
    fuzzTimeout(10, 5),
  );
});
