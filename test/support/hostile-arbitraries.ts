/**
 * fast-check arbitraries for the boundary fuzz suites: JSON descriptions of hostile values (built by
 * fixtures/fuzz/hostile-values.js, inside a worker or here), forged call replies, and declarations.
 * `FUZZ_RUNS` raises the number of cases (e.g. `FUZZ_RUNS=10000 npx vitest run test/fuzz-*`).
 */
import fc from 'fast-check';

/** How many cases an end-to-end property runs; unit properties run ten times as many. */
export const FUZZ_RUNS = Number(process.env['FUZZ_RUNS'] ?? 20);

/**
 * A fuzz test's time bound: the suite's usual 60 s, or more when FUZZ_RUNS asks for a big run (at
 * `perCaseMs` a case, far more than a case takes, so a slow machine doesn't cut a run short).
 */
export function fuzzTimeout(casesPerRun: number, perCaseMs: number): number {
  return Math.max(60_000, FUZZ_RUNS * casesPerRun * perCaseMs);
}

export type Spec = unknown;

/** Sizes around the caps the fuzz hosts use (1 MiB results, 64 KiB progress). */
const sizes = fc.oneof(fc.nat(64), fc.constantFrom(65_535, 65_537, 300_000, 1_048_000, 1_048_600, 3_000_000));

const leaf: fc.Arbitrary<Spec> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: 'json', value })),
  fc.constant({ kind: 'null' }),
  fc.constant({ kind: 'undefined' }),
  fc.record({
    kind: fc.constant('string'),
    length: sizes,
    unit: fc.constantFrom('x', 'é', '😀', '\u001b[31m'),
  }),
  fc.record({
    kind: fc.constant('deep'),
    depth: fc.oneof(fc.nat(70), fc.constantFrom(200, 5000)),
    arrays: fc.boolean(),
    leaf: fc.constant({ kind: 'json', value: 1 }),
  }),
  fc.constant({ kind: 'date' }),
  fc.constant({ kind: 'bigint' }),
  fc.record({ kind: fc.constant('typed'), length: fc.nat(1000) }),
  fc.record({ kind: fc.constant('sparse'), length: fc.constantFrom(0, 10, 1_000_000) }),
  fc.record({ kind: fc.constant('error'), message: fc.string() }),
  fc.record({ kind: fc.constant('proto'), value: fc.jsonValue({ maxDepth: 2 }) }),
);

/** Any hostile value. */
export const hostileValue: fc.Arbitrary<Spec> = fc.letrec<{ value: Spec }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ kind: fc.constant('map'), value: tie('value') }),
    fc.record({ kind: fc.constant('set'), value: tie('value') }),
    fc.record({
      kind: fc.constant('list'),
      count: fc.oneof(fc.nat(8), fc.constant(70_000)),
      item: tie('value'),
    }),
    fc
      .dictionary(
        fc.constantFrom('a', 'type', 'text', 'content', '__proto__', 'constructor', 'then'),
        tie('value'),
        {
          maxKeys: 4,
        },
      )
      .map((fields) => ({ kind: 'record', fields })),
  ),
})).value;

const json = (value: unknown) => ({ kind: 'json', value });
const text = (length: number) => ({
  kind: 'record',
  fields: { type: json('text'), text: { kind: 'string', length } },
});

/** One field of a forged reply: mostly plausible, sometimes hostile. */
const field = (plausible: fc.Arbitrary<Spec>) =>
  fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: hostileValue });

/** A reply as toolhost's worker would send it, with its fields forged, dropped or made hostile. */
export const forgedReply: fc.Arbitrary<Spec> = fc
  .record(
    {
      ok: field(fc.constantFrom(json(true), json(false))),
      content: field(
        fc.oneof(
          fc.constant(json([{ type: 'text', text: 'forged' }])),
          fc.record({
            kind: fc.constant('list'),
            count: fc.integer({ min: 1, max: 8 }),
            item: sizes.map(text),
          }),
          fc.constant(
            json([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }]),
          ),
          fc.constant(json([{ type: 'image', source: { type: 'url', url: 'https://x' } }])),
          // An IHDR claiming about 2^31 pixels a side, labelled as the PNG it is and as a GIF.
          fc.constantFrom(
            ...['image/png', 'image/gif'].map((media_type) =>
              json([
                {
                  type: 'image',
                  source: {
                    type: 'base64',
                    media_type,
                    data: 'iVBORw0KGgoAAAANSUhEUn///39///9/CAYAAAAAAAAA',
                  },
                },
              ]),
            ),
          ),
          fc.constant(
            json([
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/////////' } },
            ]),
          ),
          fc.constant(
            json([{ type: 'audio', source: { type: 'base64', media_type: 'audio/wav', data: 'AAAA' } }]),
          ),
          fc.constant(json([{ type: 'resource', resource: { uri: 'no scheme', text: 'x' } }])),
          fc.constant(json([{ type: 'resource', resource: { uri: 'file:///a', text: 'x', blob: 'AAAA' } }])),
          fc.constant(json([{ type: 'resource_link', uri: 'https://x.test/a', name: '', size: -1 }])),
        ),
      ),
      isError: field(fc.constantFrom(json(false), json(true))),
      cutBytes: field(fc.constantFrom(json(0), json(-1), json(1.5))),
      logs: field(
        fc.oneof(
          fc.constant(json([])),
          fc.constant(json([{ stream: 'stdout', text: 'hi' }])),
          fc.constant({ kind: 'list', count: 70_000, item: json({ stream: 'stderr', text: '' }) }),
          fc.constant(json([{ stream: 'fd3', text: 'x' }])),
        ),
      ),
      droppedLogChars: field(fc.constantFrom(json(0), json(-5), json(2 ** 60))),
      progressSent: field(fc.constantFrom(json(0), json(1), json(1000), json(1_000_000_000))),
      error: field(
        fc
          .constantFrom('TOOL_THREW', 'TOOL_TIMEOUT', 'HOST_CLOSED', 'UNKNOWN_TOOL', 'INVALID_INPUT', 'NOPE')
          .map((code) => json({ code, message: '\u001b[2Jforged' })),
      ),
      details: field(
        fc.oneof(fc.constant(json({ a: 1 })), fc.record({ kind: fc.constant('string'), length: sizes })),
      ),
    },
    { requiredKeys: [] },
  )
  .map((fields) => ({ kind: 'record', fields }));

/** What the forger does in one call. */
export const forgerCase = fc.oneof(
  fc.record({ mode: fc.constant('return'), value: hostileValue, reply: forgedReply }),
  fc.record({
    mode: fc.constant('emit'),
    progress: fc.array(hostileValue, { maxLength: 5 }),
    value: hostileValue,
    reply: forgedReply,
  }),
  fc.record({ mode: fc.constant('throw'), value: hostileValue, reply: forgedReply }),
);

/**
 * About how many bytes of heap the forger takes to build what a case describes, at the most (each
 * entry of a list is built anew: a list of 70,000 lists of 70,000 is 4.9 billion values).
 */
export function builtBytes(spec: Spec): number {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return 16;
  const described = spec as Record<string, unknown>;
  const count = (key: string) => Number(described[key] ?? 0);
  switch (described['kind']) {
    case 'json':
    case 'proto':
      return 16 + 8 * JSON.stringify(described['value'] ?? null).length;
    case 'string': {
      // One byte a character, two where a character is outside Latin-1 (the emoji's two units).
      const unit = String(described['unit'] ?? 'x');
      const twoByte = Array.from(unit).some((character) => (character.codePointAt(0) ?? 0) > 0xff);
      return 32 + count('length') * unit.length * (twoByte ? 2 : 1);
    }
    case 'deep':
      return 32 * count('depth') + builtBytes(described['leaf']);
    case 'typed':
      return 256 + count('length');
    case 'map':
    case 'set':
      return 128 + builtBytes(described['value']);
    case 'list':
      return 16 + count('count') * (8 + builtBytes(described['item']));
    case 'record':
      return Object.values(described['fields'] as Record<string, Spec>).reduce<number>(
        (total, field) => total + 64 + builtBytes(field),
        64,
      );
    default:
      return 256;
  }
}

/**
 * A call's heap in the fuzz hosts (the default `callHeapMb`). A worker that fills it is ended by
 * Node on a best-effort basis only: one large allocation at that moment (a string flattened for a
 * RegExp, a Map grown) has ended the whole process instead (docs/isolation.md).
 */
const CALL_HEAP_BYTES = 128 * 1024 * 1024;

/**
 * The cases whose values fit in half a call's heap, for the tiers whose workers share the host's
 * process; heap exhaustion there has suites of its own (test/call-faults.test.ts,
 * test/heap-one-allocation.test.ts). A call builds the value and its progress, or (once the forger
 * has taken over its worker's handler) the reply.
 */
export const forgerCaseInHeap = forgerCase.filter((testCase) => {
  const { value, reply, progress = [] } = testCase as { value: Spec; reply: Spec; progress?: Spec[] };
  const run = [value, ...progress].reduce<number>((total, spec) => total + builtBytes(spec), 0);
  return Math.max(run, builtBytes(reply)) <= CALL_HEAP_BYTES / 2;
});

/** Source text for one declaration field: a literal, a function, a getter that throws, or nothing. */
const fieldSource = (plausible: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 3, arbitrary: plausible },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('undefined', 'null', 'NaN', 'Symbol("s")', '() => { throw null }'),
    },
    {
      weight: 1,
      arbitrary: fc.nat(6000).map((depth) => `JSON.parse('${'['.repeat(depth)}${']'.repeat(depth)}')`),
    },
  );

/** A tool module's source with fuzzed declaration fields. */
export const declarationSource: fc.Arbitrary<string> = fc
  .record({
    name: fieldSource(fc.constantFrom('"fuzzed"', '"bad name"', '"x".repeat(65)', '() => "fuzzed"')),
    description: fieldSource(fc.constantFrom('"d"', '"\\u001b[31m red"')),
    parameterSchema: fieldSource(
      fc.constantFrom(
        '{ type: "object" }',
        '{ type: "object", $async: true }',
        '{ type: "object", $id: "https://json-schema.org/draft/2020-12/schema" }',
        '{ type: "string" }',
        '{ type: "object", properties: { a: { type: "nope" } } }',
      ),
    ),
    timeoutMs: fieldSource(fc.constantFrom('1000', '2 ** 40', '-1', '1.5')),
    concurrency: fieldSource(fc.constantFrom('"exclusive"', '"parallel"', '"both"')),
  })
  .map(
    (fields) =>
      `${Object.entries(fields)
        .map(([key, source]) => `export const ${key} = ${source};`)
        .join('\n')}\nexport function run() { return 'ran'; }\n`,
  );
