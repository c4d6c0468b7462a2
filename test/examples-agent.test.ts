/**
 * examples/agent: an agent that embeds toolhost (the process tier, named in the example) and runs
 * `runTools` with the real `@anthropic-ai/sdk` client over examples/weather-tools, laid out as a user
 * would install both. Against the local fake Messages API always, and against the real API when the
 * environment running the suite has ANTHROPIC_API_KEY (the suite never supplies one).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { childEnv, freshDir } from './support/cli-run.js';
import { askForNetwork, layOutExample, type StationServer, startStationServer } from './support/examples.js';
import { apiError, FakeMessagesApi, reply, text, toolUse } from './support/fake-messages-api.js';

const REAL_API_KEY = process.env['ANTHROPIC_API_KEY'];

let root: { path: string; remove(): void };
let agent: string;
let stations: StationServer;
let api: FakeMessagesApi;

beforeAll(async () => {
  root = freshDir('toolhost-example-agent');
  // Side by side, as in examples/: the agent loads ../weather-tools unless told otherwise.
  const weatherTools = await layOutExample('weather-tools', root.path);
  agent = join(await layOutExample('agent', root.path), 'agent.js');
  stations = await startStationServer();
  await askForNetwork(weatherTools, ['weather.example.org', stations.hostAndPort]);
}, 120_000);

afterAll(async () => {
  await stations?.close();
  root?.remove();
});

beforeEach(async () => {
  api = await FakeMessagesApi.start();
  return () => api.close();
});

interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node agent.js <args>` with `env` added to a minimal environment (no ANTHROPIC_* of the suite's). */
function runAgent(args: readonly string[], env: Record<string, string>): Promise<AgentRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [agent, ...args],
      {
        cwd: root.path,
        env: childEnv({ tmpDir: root.path, env: { WEATHER_TOOLS_BASE_URL: stations.baseUrl, ...env } }),
        timeout: 120_000,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The fake API's address, and a key the local fake accepts (it is no real key). */
function fakeApiEnv(): Record<string, string> {
  return { ANTHROPIC_BASE_URL: api.baseURL, ANTHROPIC_API_KEY: 'key-for-the-local-fake-api' };
}

describe('examples/agent (process tier) against the local fake Messages API', () => {
  it('offers the weather tools, runs the call the model asks for in the sandbox and prints the answer', async () => {
    api.script(
      reply([text('Let me look that up.'), toolUse('weather', { city: 'Oslo' }, 'toolu_oslo')]),
      reply([text('It is -3.5 °C with light snow in Oslo.')]),
    );
    const run = await runAgent(['What is the weather in Oslo?'], fakeApiEnv());
    expect(run.stderr).toBe('→ weather {"city":"Oslo"}\n');
    expect(run.stdout).toBe('It is -3.5 °C with light snow in Oslo.\n');
    expect(run.code).toBe(0);

    expect(api.requests).toHaveLength(2);
    const first = api.body(0);
    expect(first.model).toBe('claude-sonnet-5');
    expect(first.messages).toEqual([{ role: 'user', content: 'What is the weather in Oslo?' }]);
    expect(first.tools?.map((tool) => tool.name).sort()).toEqual(['forecast', 'weather']);
    // What the model reads of the zod schema is the JSON Schema toolhost converted it to.
    const weather = first.tools?.find((tool) => tool.name === 'weather');
    expect(weather?.['input_schema']).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string', minLength: 1, maxLength: 80 } },
      required: ['city'],
    });

    const answered = api.body(1).messages.at(-1);
    expect(answered?.role).toBe('user');
    expect(answered?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_oslo',
        content: [
          { type: 'text', text: expect.stringMatching(/^Oslo: -3\.5 °C, light snow \(observed [^)]+\)$/) },
        ],
      },
    ]);
    expect(stations.requests).toContain('/stations/oslo.html');
  });

  it('gives the model a failed call as an error result and goes on', async () => {
    api.script(
      reply([toolUse('weather', { city: 'Atlantis' }, 'toolu_atlantis')]),
      reply([text('There is no weather station in Atlantis.')]),
    );
    const run = await runAgent(['Weather in Atlantis?'], fakeApiEnv());
    expect(run.stdout).toBe('There is no weather station in Atlantis.\n');
    expect(run.code).toBe(0);
    const answered = api.body(1).messages.at(-1);
    expect(answered?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_atlantis',
        is_error: true,
        content: [
          {
            type: 'text',
            text: `no weather station page for Atlantis (${stations.baseUrl}/stations/atlantis.html)`,
          },
        ],
      },
    ]);
  });

  it('fails in one line, exit 1, when the API refuses the key', async () => {
    api.script(apiError(401, 'authentication_error', { message: 'invalid x-api-key' }));
    const run = await runAgent(['Weather in Oslo?'], fakeApiEnv());
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^agent: the conversation failed \(authentication_error\): .*invalid x-api-key.*\n$/,
    );
    expect(run.code).toBe(1);
  });

  it('says what to set, exit 2, without ANTHROPIC_API_KEY, and sends nothing', async () => {
    const run = await runAgent(['Weather in Oslo?'], { ANTHROPIC_BASE_URL: api.baseURL });
    expect(run.stderr).toBe('agent: ANTHROPIC_API_KEY is not set: set it to your API key\n');
    expect(run.code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });
});

describe('examples/agent (process tier) against the real Messages API', () => {
  it.skipIf(REAL_API_KEY === undefined)(
    'answers with the weather from the local station (runs only when ANTHROPIC_API_KEY is set)',
    async () => {
      const before = stations.requests.length;
      const run = await runAgent(['What is the weather in Oslo right now? Use the weather tool.'], {
        ANTHROPIC_API_KEY: REAL_API_KEY ?? '',
        ...(process.env['ANTHROPIC_MODEL'] === undefined
          ? {}
          : { ANTHROPIC_MODEL: process.env['ANTHROPIC_MODEL'] }),
      });
      expect(run.code).toBe(0);
      expect(run.stderr).toContain('→ weather');
      expect(stations.requests.slice(before)).toContain('/stations/oslo.html');
      expect(run.stdout.trim()).not.toBe('');
    },
  );
});
