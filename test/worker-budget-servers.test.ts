/**
 * MCP servers in the host-wide worker budget: each running server holds one place of `maxWorkers`
 * for as long as it runs (through its restarts), pools run on the places left, the last place
 * stays for packages (a server that would take it is left out, naming `maxWorkers`), a server
 * that starts on a full budget waits for an idle worker to be ended, and unload and close give
 * the places back. Threads and child processes are counted from outside the budget, as
 * worker-budget-cap.test.ts does.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outcomeText, type ToolHost, type WorkerBudgetEvent } from '../dist/src/index.js';
import { answered, nextEvent, useHosts } from './support/host-harness.js';
import { liveChildren, liveThreads } from './support/live-workers.js';
import { markedProcesses, writeConfig } from './support/mcp-server-configs.js';
import { fixtureEntry, mcpServerFile, writeServersConfig } from './support/mcp-server-fixtures.js';
import { tempDir, toolSource, writePackage } from './support/tool-packages.js';

/** Every `workers` event of a host, and the places each source holds by them. */
function recordWorkers(host: ToolHost): { events: WorkerBudgetEvent[]; holds(source: string): number } {
  const events: WorkerBudgetEvent[] = [];
  host.on('workers', (event) => events.push(event));
  return {
    events,
    holds: (source) =>
      events
        .filter((event) => event.source === source)
        .reduce((sum, event) => sum + (event.type === 'started' ? event.count : -event.count), 0),
  };
}

/** Loads `count` packages with one echo tool each (`echo_<index>`). */
async function loadEchoPackages(host: ToolHost, root: string, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const report = await host.load(
      await writePackage(join(root, `p${index}`), {
        'echo.js': toolSource(`echo_${index}`, `'echo ${index}'`),
      }),
    );
    expect(report.modules.map((module) => module.state)).toEqual(['offered']);
  }
}

/**
 * Makes `calls` calls, `inFlight` at once, every `serverEvery`th to the server's `echo` and the rest
 * spread over the packages' (`echo_<index>`), checks every answer, and returns the most `live()` and
 * the most `workers` the budget counted, each read at every `workers` event and every answer.
 */
async function spreadCalls(
  host: ToolHost,
  options: { calls: number; inFlight: number; packages: number; serverEvery: number; live(): number },
): Promise<{ mostLive: number; mostCounted: number }> {
  const { calls, packages, serverEvery, live } = options;
  let mostLive = 0;
  let mostCounted = 0;
  const onWorkers = (event: WorkerBudgetEvent) => {
    mostLive = Math.max(mostLive, live());
    mostCounted = Math.max(mostCounted, event.workers);
  };
  host.on('workers', onWorkers);
  const toServer = (index: number) => index % serverEvery === serverEvery - 1;
  const answers: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: options.inFlight }, async () => {
      while (next < calls) {
        const index = next;
        next += 1;
        const name = toServer(index) ? 'echo' : `echo_${index % packages}`;
        const outcome = await host.call(name, { text: `${index}` });
        mostLive = Math.max(mostLive, live());
        answers[index] = outcomeText(outcome);
      }
    }),
  );
  host.off('workers', onWorkers);
  expect(answers).toEqual(
    Array.from({ length: calls }, (_, index) =>
      toServer(index) ? `echo: ${index}` : `echo ${index % packages}`,
    ),
  );
  return { mostLive, mostCounted };
}

describe('MCP servers in the worker budget', () => {
  const makeHost = useHosts();

  it('a server holds one place while it runs and through a restart; pools run on the rest; the last place stays for packages; unload and close give places back', async () => {
    const maxWorkers = 4;
    const { host } = await makeHost({ maxWorkers, maxThreadsPerPool: 1, isolation: 'worker' });
    const workers = recordWorkers(host);
    const root = await tempDir('toolhost-budget-servers-');
    const packages = 4;
    await loadEchoPackages(host, root, packages);
    const first = await writeServersConfig(root, {
      honest: fixtureEntry('honest'),
      exits: fixtureEntry('exit-mid-call', { toolhost: { timeoutMs: 50_000 } }),
    });
    const firstReport = await host.load(first);
    expect(firstReport.modules.filter((module) => module.state !== 'offered')).toEqual([]);
    expect(workers.holds(`${first}#honest`)).toBe(1);
    expect(workers.holds(`${first}#exits`)).toBe(1);
    expect(await host.call('count', {})).toStrictEqual(answered('count: 1'));

    // Calls spread over more packages than the places the servers leave, the servers' calls among them.
    const baseline = liveThreads.now;
    const { mostLive: mostThreads, mostCounted } = await spreadCalls(host, {
      calls: 150,
      inFlight: maxWorkers * 3,
      packages,
      serverEvery: 5,
      live: () => liveThreads.now - baseline,
    });
    expect(mostThreads).toBeGreaterThan(0);
    expect(mostThreads).toBeLessThanOrEqual(maxWorkers - 2);
    expect(mostCounted).toBeLessThanOrEqual(maxWorkers);
    // The same process all along: its state was kept.
    expect(await host.call('count', {})).toStrictEqual(answered('count: 2'));

    // A server that dies is restarted on the place it holds: it never holds two.
    expect((await host.call('exit_mid_reply', {})).error?.code).toBe('TOOL_CRASHED');
    expect(await host.call('exit_say', {})).toStrictEqual(answered('still here'));
    expect(await host.call('exit_count', {})).toStrictEqual(answered('count: 1'));
    expect(workers.holds(`${first}#exits`)).toBe(1);

    // Two servers run, one more fits; a fourth would take the last place.
    const second = await writeServersConfig(
      root,
      { second: fixtureEntry('honest', { toolhost: { prefix: 'second' } }) },
      'second.json',
    );
    expect((await host.load(second)).modules.map((module) => module.state)).toEqual(['offered', 'offered']);
    const third = await writeServersConfig(
      root,
      { third: fixtureEntry('honest', { toolhost: { prefix: 'third' } }) },
      'third.json',
    );
    await host.load(third);
    const refused = host.status().find((status) => status.path === `${third}#third`);
    expect(refused).toMatchObject({ state: 'left-out', code: 'SERVER_FAILED' });
    expect(refused?.reason).toContain("the last of the host's maxWorkers (4) places");
    expect(refused?.reason).toContain('raise maxWorkers');
    expect(workers.holds(`${third}#third`)).toBe(0);

    // Unloaded, a server gives its place back, and the refused one starts when loaded again.
    const secondEnded = nextEvent(host, 'workers', (event) => event.source === `${second}#second`);
    expect(host.unload(second)).toBe(true);
    expect(await secondEnded).toMatchObject([{ type: 'ended', count: 1 }]);
    expect(workers.holds(`${second}#second`)).toBe(0);
    expect((await host.load(third)).modules.map((module) => module.state)).toEqual(['offered', 'offered']);
    expect(workers.holds(`${third}#third`)).toBe(1);
    expect(await host.call('third_echo', { text: 'back' })).toStrictEqual(answered('echo: back'));
    expect(await host.call('echo_0', {})).toStrictEqual(answered('echo 0'));
    // Loaded again unchanged, a config's running servers go on: the same process, no new place.
    await host.load(first);
    expect(await host.call('count', {})).toStrictEqual(answered('count: 3'));
    expect(workers.holds(`${first}#honest`)).toBe(1);

    await host.close();
    for (const source of [`${first}#honest`, `${first}#exits`, `${third}#third`]) {
      expect(workers.holds(source)).toBe(0);
    }
  }, 120_000);

  it("in the process tier, the host's live child processes (package processes, the spare, the server) stay within maxWorkers", async () => {
    const maxWorkers = 3;
    const { host } = await makeHost({ maxWorkers, maxThreadsPerPool: 1, isolation: 'process' });
    const root = await tempDir('toolhost-budget-servers-');
    const packages = 3;
    await loadEchoPackages(host, root, packages);
    const config = await writeServersConfig(root, { honest: fixtureEntry('honest') });
    expect((await host.load(config)).modules.map((module) => module.state)).toEqual(['offered', 'offered']);
    const { mostLive, mostCounted } = await spreadCalls(host, {
      calls: 40,
      inFlight: maxWorkers * 3,
      packages,
      serverEvery: 4,
      live: liveChildren,
    });
    // The server is one of them all along, so packages never had more than two.
    expect(mostLive).toBeGreaterThan(1);
    expect(mostLive).toBeLessThanOrEqual(maxWorkers);
    expect(mostCounted).toBeLessThanOrEqual(maxWorkers);
    expect(await host.call('count', {})).toStrictEqual(answered('count: 1'));
  }, 120_000);

  it('a server that starts on a full budget waits for an idle worker to be ended, and never runs beyond maxWorkers', async () => {
    const maxWorkers = 2;
    const { host } = await makeHost({ maxWorkers, maxThreadsPerPool: 1, isolation: 'worker' });
    const workers = recordWorkers(host);
    const root = await tempDir('toolhost-budget-servers-');
    await loadEchoPackages(host, root, 2);
    expect(await host.call('echo_0', {})).toStrictEqual(answered('echo 0'));
    expect(await host.call('echo_1', {})).toStrictEqual(answered('echo 1'));
    // Both places are held by idle workers.
    expect(workers.events.at(-1)?.workers).toBe(maxWorkers);
    const config = await writeServersConfig(root, { honest: fixtureEntry('honest') });
    const before = workers.events.length;
    expect((await host.load(config)).modules.map((module) => module.state)).toEqual(['offered', 'offered']);
    const during = workers.events.slice(before);
    const serverStarted = during.findIndex((event) => event.source === `${config}#honest`);
    expect(serverStarted).toBeGreaterThan(0);
    expect(during[serverStarted]?.type).toBe('started');
    expect(during.slice(0, serverStarted).some((event) => event.type === 'ended')).toBe(true);
    expect(Math.max(...workers.events.map((event) => event.workers))).toBeLessThanOrEqual(maxWorkers);
    expect(await host.call('echo', { text: 'in' })).toStrictEqual(answered('echo: in'));
    // The package whose worker was ended starts one on the place left.
    expect(await host.call('echo_0', {})).toStrictEqual(answered('echo 0'));
    expect(await host.call('echo_1', {})).toStrictEqual(answered('echo 1'));
    expect(Math.max(...workers.events.map((event) => event.workers))).toBeLessThanOrEqual(maxWorkers);
  }, 60_000);

  it('a server left out at its start gives its place back only once its process has ended', async () => {
    const { host } = await makeHost({ maxWorkers: 3, readTimeoutMs: 1000, rereadDelaysMs: [] });
    const workers = recordWorkers(host);
    const root = await tempDir('toolhost-budget-servers-');
    const { path, marker } = writeConfig(root, {
      slow: { command: process.execPath, args: [mcpServerFile('slow-initialize')] },
    });
    await host.load(path);
    expect(host.status().find((status) => status.path === `${path}#slow`)).toMatchObject({
      state: 'left-out',
      code: 'DECLARATION_TIMEOUT',
    });
    // It held a place while it ran, and gave it back: by then nothing of it runs.
    expect(
      workers.events.filter((event) => event.source === `${path}#slow`).map((event) => event.type),
    ).toEqual(['started', 'ended']);
    expect(markedProcesses(marker)).toEqual([]);
  }, 60_000);
});
