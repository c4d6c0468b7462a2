/**
 * examples/weather-tools: a tool package with real dependencies from the npm registry (an HTML
 * parser, zod schemas, date-fns) and a `fetch` to the host its manifest asks for, laid out as a user
 * would install it. Its selftests pass through `toolhost selftest` in every tier, and a call reaches
 * the weather service (here a local server the manifest names) in every tier that grants it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { type CliResult, freshDir, runCli, stderrLines } from './support/cli-run.js';
import { askForNetwork, layOutExample, type StationServer, startStationServer } from './support/examples.js';

const TIERS = ['worker', 'strict', 'process'] as const;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const { sandbox } = await processEnvironment();

const OSLO_FORECAST = [
  'Oslo, the next 3 days:',
  'Monday 7 December: -6 to -1 °C, snow showers',
  'Tuesday 8 December: -8 to -4 °C, clear & cold',
  'Wednesday 9 December: -5 to 0 °C, cloudy',
].join('\n');

let root: { path: string; remove(): void };
let weatherTools: string;
let stations: StationServer;

beforeAll(async () => {
  root = freshDir('toolhost-example-weather');
  weatherTools = await layOutExample('weather-tools', root.path);
  stations = await startStationServer();
  // The example asks for its real weather service; here the service is the local server, so the
  // copy's manifest asks for that one too (the grant below is a subset of what it asks).
  await askForNetwork(weatherTools, ['weather.example.org', stations.hostAndPort]);
}, 120_000);

afterAll(async () => {
  await stations?.close();
  root?.remove();
});

/** What toolhost says on its own behalf beside the result (a note on the tier, a grant warning). */
function notices(result: CliResult): string[] {
  return stderrLines(result).filter((line) => /^toolhost: (warning|note): /.test(line));
}

/** stderr without {@link notices}: the failure line and the tool's frames. */
function failure(result: CliResult): string[] {
  return stderrLines(result).filter((line) => !/^toolhost: (warning|note): /.test(line));
}

/** `toolhost <args>` with the weather service's address passed to the tools. */
function toolhost(args: readonly string[]) {
  return runCli(args, {
    tmpDir: root.path,
    cwd: root.path,
    env: { WEATHER_TOOLS_BASE_URL: stations.baseUrl },
  });
}

/** `toolhost call` of one of the example's tools in `tier`, granted the network (all of it, or `grant`) and its base URL. */
function callTool(tier: string, tool: string, args: string, grant = 'weather-tools') {
  return toolhost([
    'call',
    '--isolation',
    tier,
    '--allow-network',
    grant,
    '--allow-env',
    'WEATHER_TOOLS_BASE_URL',
    weatherTools,
    tool,
    args,
  ]);
}

describe.each(TIERS)('examples/weather-tools in the %s tier', (tier) => {
  it('passes its selftests through toolhost selftest --json', async () => {
    const result = await toolhost(['selftest', '--json', '--isolation', tier, weatherTools]);
    expect(result.stderr).not.toContain('left out');
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      isolation: { tier: string };
      counts: Record<string, number>;
      results: Array<{ tool: string; status: string }>;
    };
    expect(report.isolation.tier).toBe(tier);
    expect(report.results.map(({ tool, status }) => `${tool} ${status}`).sort()).toEqual([
      'forecast passed',
      'weather passed',
    ]);
    expect(report.counts).toEqual({ passed: 2, failed: 0, noSelftest: 0, leftOut: 0 });
    expect(report.ok, result.stdout).toBe(true);
    expect(result.code).toBe(0);
  });

  // Strict on Node 25 and later gives a package held to a list of hosts no network at all (its
  // permission model can only allow or deny the whole network); the other lines can't deny it.
  const strictDeniesHosts = tier === 'strict' && NODE_MAJOR >= 25;

  it.skipIf(strictDeniesHosts)('fetches and parses the station page of the granted host', async () => {
    const before = stations.requests.length;
    const result = await callTool(tier, 'forecast', '{"city": "Oslo"}');
    expect(failure(result)).toEqual([]);
    // The thread tiers can't hold a package to its hosts, and say so; the process tier can.
    if (tier === 'process') expect(notices(result)).toEqual([]);
    else expect(notices(result).join('\n')).toContain(`${tier} isolation`);
    expect(result.stdout.trim()).toBe(OSLO_FORECAST);
    expect(result.code).toBe(0);
    expect(stations.requests.slice(before)).toEqual(['/stations/oslo.html']);
  });

  it.runIf(strictDeniesHosts)('gets no network under strict on this Node line, and says so', async () => {
    const before = stations.requests.length;
    const result = await callTool(tier, 'weather', '{"city": "Oslo"}');
    expect(result.code).toBe(1);
    expect(failure(result)[0]).toMatch(/^toolhost: the tool "weather" failed: TOOL_ACCESS_DENIED: /);
    expect(stations.requests.length).toBe(before);
  });

  it.skipIf(strictDeniesHosts)(
    'answers a city without a station page with an error result naming it',
    async () => {
      const result = await callTool(tier, 'weather', '{"city": "Atlantis"}');
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(failure(result)[0]).toBe(
        `toolhost: the tool "weather" failed: TOOL_THREW: no weather station page for Atlantis (${stations.baseUrl}/stations/atlantis.html)`,
      );
    },
  );
});

describe('examples/weather-tools in the process tier, sandboxed', () => {
  it.skipIf(!sandbox.available)(
    'is refused the local service when its grant names only the real one',
    async () => {
      const before = stations.requests.length;
      const result = await callTool(
        'process',
        'weather',
        '{"city": "Oslo"}',
        'weather-tools=weather.example.org',
      );
      expect(result.code).toBe(1);
      expect(failure(result)[0]).toBe(
        `toolhost: the tool "weather" failed: TOOL_ACCESS_DENIED: the process isolation tier refused network access to ${stations.hostAndPort} (not granted to package weather-tools)`,
      );
      expect(stations.requests.length).toBe(before);
    },
  );
});

describe('examples/weather-tools in the process tier, against pages it must not trust', () => {
  const call = (city: string) => callTool('process', 'weather', JSON.stringify({ city }));

  it('answers a page whose temperature is not a number with an error, never a made-up reading', async () => {
    const result = await call('forged');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(failure(result)[0]).toMatch(
      /^toolhost: the tool "weather" failed: TOOL_THREW: not a station page: .*temperatureC/,
    );
  });

  it('refuses a page larger than a station page, and the next call still answers', async () => {
    const huge = await call('huge');
    expect(huge.code).toBe(1);
    expect(failure(huge)[0]).toBe(
      'toolhost: the tool "weather" failed: TOOL_THREW: the page for huge is more than a station page',
    );
    const next = await call('Oslo');
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/^Oslo: -3\.5 °C, light snow \(observed [^)]+\)\n$/);
  });
});
