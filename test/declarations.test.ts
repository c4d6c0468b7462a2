/**
 * Reading declarations of untrusted modules: what is offered, what is left out and why (logged once),
 * what falls back to a default, and name clashes. Every test also shows the host still serves calls.
 * Reads that run over their time bound are in declaration-timeouts.test.ts; the catalogue of bad
 * declarations, in every tier, is declarations-left-out.test.ts.
 */
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOOL_TIMEOUT_MS, outcomeText } from '../dist/src/index.js';
import {
  answered,
  expectHostFine,
  fixtureModule,
  hostPackage,
  loadEcho,
  nextModuleEvent,
  statusesOf,
  statusOf,
  useHosts,
} from './support/host-harness.js';

const makeHost = useHosts();

describe('declaration fields', () => {
  it('every field may be a zero-argument function, and the tool is offered with what they return', async () => {
    const { host } = await makeHost();
    const path = fixtureModule('decl-callback-style.js');

    const report = await host.load(path);

    expect(statusesOf(report.modules)).toStrictEqual([
      { path, source: path, name: 'callback_style', state: 'offered' },
    ]);
    expect(host.list()).toStrictEqual([
      {
        name: 'callback_style',
        description: 'Declares every field through a function',
        parameterSchema: { type: 'object', properties: { n: { type: 'integer' } } },
        timeoutMs: 1234,
        concurrency: 'exclusive',
      },
    ]);
    expect(await host.call('callback_style', { n: 3 })).toStrictEqual(answered('n is 3'));
  });

  it('the module is read in an empty environment', async () => {
    process.env['TOOLHOST_DECLARATION_SECRET'] = 'must-not-leak';
    try {
      const { host } = await makeHost();
      await host.load(fixtureModule('decl-reads-env.js'));
      expect(host.list().map((tool) => [tool.name, tool.description])).toEqual([
        ['decl_reads_env', 'environment seen while read: []'],
      ]);
    } finally {
      delete process.env['TOOLHOST_DECLARATION_SECRET'];
    }
  });

  it.each([
    ['negative', 'decl-timeout-negative.js', 'decl_timeout_negative'],
    ['a string', 'decl-timeout-string.js', 'decl_timeout_string'],
    ['Infinity', 'decl-timeout-infinity.js', 'decl_timeout_infinity'],
    ['throwing', 'decl-timeout-throws.js', 'decl_timeout_throws'],
  ])(
    'a timeoutMs that is %s means the default 30000, and the tool is still offered and runs',
    async (_kind, file, name) => {
      const { host, logger } = await makeHost();

      const report = await host.load(fixtureModule(file));

      expect(report.modules.map((module) => [module.name, module.state])).toEqual([[name, 'offered']]);
      expect(host.list()).toEqual([expect.objectContaining({ name, timeoutMs: DEFAULT_TOOL_TIMEOUT_MS })]);
      expect(DEFAULT_TOOL_TIMEOUT_MS).toBe(30_000);
      expect(logger.lines).toEqual([]);
      expect(await host.call(name, {})).toStrictEqual(answered('ran'));
    },
  );

  it.each([
    ['unknown ("sometimes")', 'decl-concurrency-bad.js', 'decl_concurrency_bad'],
    ['throwing', 'decl-concurrency-throws.js', 'decl_concurrency_throws'],
  ])(
    'a concurrency that is %s means "parallel", and the tool is still offered and runs',
    async (_kind, file, name) => {
      const { host, logger } = await makeHost();

      await host.load(fixtureModule(file));

      expect(host.list()).toEqual([expect.objectContaining({ name, concurrency: 'parallel' })]);
      expect(logger.lines).toEqual([]);
      expect(await host.call(name, {})).toStrictEqual(answered('ran'));
    },
  );
});

describe('logging left-out modules', () => {
  it('a left-out module is logged once, however often it is loaded, listed or its status asked', async () => {
    const { host, logger } = await makeHost();
    const path = fixtureModule('decl-name-throws.js');

    await host.load(path);
    await host.load(path);
    await loadEcho(host);
    for (let turn = 0; turn < 20; turn++) {
      host.list();
      host.status();
      host.toAnthropicTools();
    }
    await host.load(path);

    expect(logger.matching('warn', 'left out')).toEqual([
      `left out ${path}: decl-name-throws.js:3:9: name threw: no name today`,
    ]);
    expect(host.status().filter((status) => status.path === path)).toHaveLength(1);
    await expectHostFine(host);
  });
});

describe('name clashes', () => {
  it('between two packages the first loaded wins; the second is left out with NAME_TAKEN and its sibling still works', async () => {
    const { host, logger } = await makeHost();
    const first = realpathSync(hostPackage('weather-a'));
    const second = realpathSync(hostPackage('weather-b'));
    const winner = `${first}/tools/forecast.js`;
    const loser = `${second}/tools/forecast.js`;

    await host.load(first);
    const report = await host.load(second);

    const reason = `the name "forecast" is already offered by ${winner}`;
    expect(report.source).toBe(second);
    expect(report.kind).toBe('package');
    // Sorted: the order of one package's modules in a report is not what this test is about.
    const modules = statusesOf(report.modules).sort((a, b) => a.path.localeCompare(b.path));
    expect(modules).toStrictEqual([
      {
        path: loser,
        source: second,
        packageName: 'weather-b',
        name: 'forecast',
        state: 'left-out',
        code: 'NAME_TAKEN',
        reason,
      },
      {
        path: `${second}/tools/tides.js`,
        source: second,
        packageName: 'weather-b',
        name: 'tides',
        state: 'offered',
      },
    ]);
    expect(host.status().find((status) => status.path === winner)).toMatchObject({ state: 'offered' });
    expect(host.list().map((tool) => tool.name)).toEqual(['forecast', 'tides']);
    expect(logger.matching('warn', 'left out')).toEqual([`left out ${loser}: ${reason}`]);
    expect(await host.call('forecast', {})).toStrictEqual(answered('forecast from weather-a'));
    expect(await host.call('tides', {})).toStrictEqual(answered('tides from weather-b'));
  });

  // Skipped until src/host/tool-host.ts load() gives a package's modules their load order in the order
  // listed: today `order` is taken after each module's `await moduleVersion()`, so which twin wins
  // depends on which file hash resolves first (the second won 3 times in 30 runs).
  it('between two modules of one package the one listed first wins', async () => {
    const { host } = await makeHost();
    const root = realpathSync(hostPackage('twins'));

    const report = await host.load(root);

    expect(statusesOf(report.modules).map((module) => [module.path, module.state, module.code])).toEqual([
      [`${root}/tools/listed-first.js`, 'offered', undefined],
      [`${root}/tools/listed-second.js`, 'left-out', 'NAME_TAKEN'],
    ]);
    expect(await host.call('twin', {})).toStrictEqual(answered('the twin listed first'));
  });

  it("the host's own tool wins a clash with a loaded one, and the loaded one comes back when it is unregistered", async () => {
    const { host } = await makeHost();
    const path = fixtureModule('echo.js');
    await loadEcho(host);
    const leftOut = nextModuleEvent(host, (event) => event.status.path === path);

    host.register({
      name: 'echo',
      description: "The host's own echo",
      parameterSchema: { type: 'object', properties: { text: { type: 'string' } } },
      run: (args) => `host echo: ${String(args['text'])}`,
    });

    expect(statusOf((await leftOut).status)).toStrictEqual({
      path,
      source: path,
      name: 'echo',
      state: 'left-out',
      code: 'NAME_TAKEN',
      reason: `the host's own tool "echo" has this name`,
    });
    expect(host.list().map((tool) => [tool.name, tool.description])).toEqual([
      ['echo', "The host's own echo"],
    ]);
    expect(await host.call('echo', { text: 'hi' })).toStrictEqual(answered('host echo: hi'));

    expect(host.unregister('echo')).toBe(true);
    expect(statusesOf(host.status())).toStrictEqual([{ path, source: path, name: 'echo', state: 'offered' }]);
    await expectHostFine(host);
  });

  it("a module loaded after the host's own tool of that name is left out at once", async () => {
    const { host } = await makeHost();
    host.register({
      name: 'echo',
      description: "The host's own echo",
      parameterSchema: { type: 'object' },
      run: () => 'host echo',
    });

    const report = await host.load(fixtureModule('echo.js'));

    expect(report.modules).toEqual([
      expect.objectContaining({
        state: 'left-out',
        code: 'NAME_TAKEN',
        reason: `the host's own tool "echo" has this name`,
      }),
    ]);
    expect(outcomeText(await host.call('echo', { text: 'x' }))).toBe('host echo');
  });
});
