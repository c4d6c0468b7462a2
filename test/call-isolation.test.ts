/**
 * What a tool can't reach or leave behind: the host's environment (unless allow-listed), the host's
 * stdout and stderr, later calls of its worker (through timers it left running), and the host's
 * prototypes (through `__proto__` keys in its arguments).
 */
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import {
  answered,
  collect,
  expectHostFine,
  fixtureModule,
  jsonOf,
  loadEcho,
  useHosts,
} from './support/host-harness.js';

const makeHost = useHosts();

describe('the environment', () => {
  const saved = {
    apiKey: process.env['ANTHROPIC_API_KEY'],
    visible: process.env['TOOLHOST_TEST_VISIBLE'],
  };
  beforeEach(() => {
    process.env['ANTHROPIC_API_KEY'] = 'sk-ant-test-not-for-tools';
    process.env['TOOLHOST_TEST_VISIBLE'] = 'chosen-value';
  });
  afterEach(() => {
    for (const [name, value] of [
      ['ANTHROPIC_API_KEY', saved.apiKey],
      ['TOOLHOST_TEST_VISIBLE', saved.visible],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('a tool sees an empty process.env by default: no API key', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('call-reads-env.js'));

    expect(jsonOf(await host.call('call_reads_env', {}))).toStrictEqual({
      keys: [],
      apiKey: null,
      visible: null,
    });
  });

  it('envAllowList passes the chosen variables and nothing else', async () => {
    const { host } = await makeHost({ envAllowList: ['TOOLHOST_TEST_VISIBLE', 'TOOLHOST_TEST_UNSET'] });
    await host.load(fixtureModule('call-reads-env.js'));

    expect(jsonOf(await host.call('call_reads_env', {}))).toStrictEqual({
      keys: ['TOOLHOST_TEST_VISIBLE'],
      apiKey: null,
      visible: 'chosen-value',
    });
  });
});

describe("a tool's printing", () => {
  // What the fixture prints: one stderr line, then 20 000 stdout lines.
  const printed = [
    'flood starts on stderr\n',
    ...Array.from({ length: 20_000 }, (_, line) => `flood line ${line} from a noisy tool\n`),
  ];
  const printedLength = printed.join('').length;
  let stdoutWrite: MockInstance;
  let stderrWrite: MockInstance;
  beforeEach(() => {
    stdoutWrite = vi.spyOn(process.stdout, 'write');
    stderrWrite = vi.spyOn(process.stderr, 'write');
  });
  afterEach(() => {
    stdoutWrite.mockRestore();
    stderrWrite.mockRestore();
  });
  const wroteFlood = (spy: MockInstance) =>
    spy.mock.calls.filter((call) => String(call[0]).includes('flood'));

  it("a console.log flood is captured, capped at maxLogChars, handed to the 'output' event, and never written to the host's stdout", async () => {
    const maxLogChars = 65_536;
    const { host, logger } = await makeHost({ maxLogChars });
    await loadEcho(host);
    await host.load(fixtureModule('call-console-flood.js'));
    const outputs = collect(host, 'output');

    const outcome = await host.call('call_console_flood', {}, { callId: 'noisy_1' });

    expect(outcome).toStrictEqual(answered('printed'));
    expect(outputs).toHaveLength(1);
    const [output] = outputs;
    expect(output?.name).toBe('call_console_flood');
    expect(output?.callId).toBe('noisy_1');
    expect(output?.logs[0]).toStrictEqual({ stream: 'stderr', text: 'flood starts on stderr\n' });
    expect(output?.logs.slice(1).every((log) => log.stream === 'stdout')).toBe(true);
    expect(output?.logs.map((log) => log.text).join('')).toBe(printed.join('').slice(0, maxLogChars));
    expect(output?.droppedChars).toBe(printedLength - maxLogChars);
    expect(wroteFlood(stdoutWrite)).toEqual([]);
    expect(wroteFlood(stderrWrite)).toEqual([]);
    expect(logger.lines).toEqual([]);
    await expectHostFine(host);
  });

  it("without an 'output' listener the printing goes to the logger as one line, still never to the host's stdout", async () => {
    const { host, logger } = await makeHost({ maxLogChars: 1_000 });
    await host.load(fixtureModule('call-console-flood.js'));

    expect(await host.call('call_console_flood', {})).toStrictEqual(answered('printed'));

    expect(logger.lines).toStrictEqual([
      // A log line is one line of plain text: the tool's newlines are shown as escapes.
      {
        level: 'info',
        message: `tool call_console_flood printed: ${printed.join('').slice(0, 1_000).replaceAll('\n', '\\n')}`,
      },
    ]);
    expect(wroteFlood(stdoutWrite)).toEqual([]);
    expect(wroteFlood(stderrWrite)).toEqual([]);
  });
});

describe('timers a call leaves running', () => {
  it('a setInterval left running does not tick into a later call of the same worker', async () => {
    const { host } = await makeHost({ maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-leaves-interval.js'));

    const first = jsonOf(await host.call('call_leaves_interval', { start: true })) as { isolate: string };
    const later = jsonOf(await host.call('call_leaves_interval', {}));

    expect(first).toStrictEqual({ isolate: first.isolate, ticks: 1 });
    expect(later).toStrictEqual({ isolate: first.isolate, ticksWhileWaiting: 0 });
  });
});

describe('__proto__ in the arguments', () => {
  it("reaches the tool as an own key, and can't pollute Object.prototype, in its worker or the host", async () => {
    const { host } = await makeHost();
    await loadEcho(host);
    await host.load(fixtureModule('call-proto-args.js'));
    const args = JSON.parse(
      '{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}',
    );

    const outcome = await host.call('call_proto_args', args);

    // The tool's naive merge tried to add to its worker's Object.prototype, which takes no new
    // properties once the worker is locked down...
    expect(outcome.error).toMatchObject({
      code: 'TOOL_THREW',
      message: 'Cannot add property polluted, object is not extensible',
    });
    // ...and nothing of it reached the host.
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.hasOwn(args, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    await expectHostFine(host);
  });
});
