import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTools, ToolHost, ToolLoopError, toRunnableTools } from '../dist/src/index.js';
import { body, loopTool, reply, text, toolUse, useFakeApi } from './support/fake-messages-api.js';

const fake = useFakeApi();
let host: ToolHost;
let dataDir: string;

function fixture(file: string): string {
  return fileURLToPath(new URL(`../fixtures/loop/${file}`, import.meta.url));
}

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'toolhost-loop-'));
  host = new ToolHost({
    isolation: 'worker',
    dataDir,
    logger: { info: () => {}, warn: () => {}, error: () => {} },
  });
  for (const file of ['weather.js', 'sensor.js', 'context-report.js', 'stall.js'])
    await host.load(fixture(file));
});

afterEach(async () => {
  await host.close();
  await rm(dataDir, { recursive: true, force: true });
});

function resultsOf(requestIndex: number): ToolResultBlockParam[] {
  return fake.api.body(requestIndex).messages.at(-1)?.content as ToolResultBlockParam[];
}

describe('runTools with a ToolHost', () => {
  it("offers the host's tools and runs their calls in the sandbox", async () => {
    fake.api.script(reply([toolUse('weather', { city: 'Oslo' }, 'toolu_w')]), reply([text('sunny')]));

    const { response } = await runTools(fake.client, body('weather?'), { host });

    expect(response.content).toEqual([{ type: 'text', text: 'sunny', citations: null }]);
    expect(fake.api.body(0).tools).toContainEqual({
      name: 'weather',
      description: 'The current weather for a city',
      input_schema: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
    });
    expect(resultsOf(1)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_w', content: [{ type: 'text', text: 'sunny in Oslo' }] },
    ]);
  });

  it("answers a throwing host tool and input that fails the tool's schema with error results", async () => {
    fake.api.script(
      reply([toolUse('sensor', {}, 'toolu_s'), toolUse('weather', { town: 'Oslo' }, 'toolu_w')]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { host });

    const [sensor, weather] = resultsOf(1);
    expect(sensor).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_s',
      content: [{ type: 'text', text: 'the sensor is offline' }],
      is_error: true,
    });
    expect(weather).toMatchObject({ tool_use_id: 'toolu_w', is_error: true });
    expect(JSON.stringify(weather?.content)).toContain('city');
  });

  it('neither offers nor runs withheld host tools, and host tools see the withheld names', async () => {
    fake.api.script(
      reply([toolUse('weather', { city: 'Oslo' }, 'toolu_w'), toolUse('context_report', {}, 'toolu_c')]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { host, withheld: ['weather'] });

    expect(
      fake.api
        .body(0)
        .tools?.map((tool) => tool.name)
        .sort(),
    ).toEqual(['context_report', 'sensor', 'stall']);
    const [weather, report] = resultsOf(1);
    expect(weather).toMatchObject({ is_error: true });
    expect(JSON.stringify(weather?.content)).toContain('unknown tool \\"weather\\"');
    expect(report?.content).toEqual([
      { type: 'text', text: JSON.stringify({ callId: 'toolu_c', withheld: ['weather'] }) },
    ]);
  });

  it('caps a host tool with toolTimeoutMs, and the next call of the host still runs', async () => {
    fake.api.script(
      reply([toolUse('stall', {}, 'toolu_h')]),
      reply([toolUse('weather', { city: 'Rome' })]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { host, toolTimeoutMs: 300 });

    expect(resultsOf(1)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_h',
        content: [{ type: 'text', text: 'tool timed out after 300 ms' }],
        is_error: true,
      },
    ]);
    expect(resultsOf(2)).toMatchObject([{ content: [{ type: 'text', text: 'sunny in Rome' }] }]);
  });

  it('aborts a running host tool through the signal, and the host still answers the next call', async () => {
    fake.api.script(reply([toolUse('stall', {})]));
    const controller = new AbortController();
    host.on('progress', (event) => {
      if (event.name === 'stall') controller.abort();
    });

    const error = await runTools(fake.client, body(), { host, signal: controller.signal }).catch(
      (thrown: unknown) => thrown,
    );

    expect(error).toBeInstanceOf(ToolLoopError);
    expect((error as ToolLoopError).type).toBe('aborted');
    expect(await host.call('weather', { city: 'Lima' })).toMatchObject({
      isError: false,
      content: [{ text: 'sunny in Lima' }],
    });
  });

  it('runs a turn with an exclusive host tool one call at a time, in the model order', async () => {
    await host.load(fixture('ledger.js'));
    await host.load(fixture('note.js'));
    const log = join(dataDir, 'ledger.log');
    fake.api.script(
      reply([
        toolUse('note', { log, entry: '1' }),
        toolUse('ledger', { log, entry: '2' }),
        toolUse('note', { log, entry: '3' }),
      ]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { host });

    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual([
      'start 1',
      'end 1',
      'start 2',
      'end 2',
      'start 3',
      'end 3',
    ]);
  });

  it('lets a loop tool of the same name win over the host tool', async () => {
    fake.api.script(reply([toolUse('weather', { city: 'Oslo' })]), reply([text('ok')]));
    const localWeather = loopTool('weather', () => 'foggy (local)');

    await runTools(fake.client, body(), { host, tools: [localWeather] });

    expect(fake.api.body(0).tools?.filter((tool) => tool.name === 'weather')).toEqual([
      { name: 'weather', description: 'the weather tool', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(resultsOf(1)).toMatchObject([{ content: [{ type: 'text', text: 'foggy (local)' }] }]);
  });

  it('tells the model when the host was closed under the loop', async () => {
    fake.api.script(reply([toolUse('weather', { city: 'Oslo' })]), reply([text('ok')]));
    await host.close();

    // A closed host answers HOST_CLOSED outcomes (it does not reject), so the model is told.
    await runTools(fake.client, body(), { host });

    expect(resultsOf(1)).toMatchObject([{ is_error: true, content: [{ text: 'the tool host is closed' }] }]);
  });
});

describe("the SDK's toolRunner with toRunnableTools(host)", () => {
  it('runs host tools in the sandbox; an error outcome reaches the model as is_error', async () => {
    fake.api.script(
      reply([toolUse('weather', { city: 'Oslo' }, 'toolu_w'), toolUse('sensor', {}, 'toolu_s')]),
      reply([text('Oslo is sunny; the sensor is offline')]),
    );

    const final = await fake.client.beta.messages.toolRunner({
      model: 'claude-test',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'weather and sensor?' }],
      tools: toRunnableTools(host),
      thread: false,
    });

    expect(final.content).toMatchObject([{ type: 'text', text: 'Oslo is sunny; the sensor is offline' }]);
    expect(fake.api.requests[0]?.path).toContain('/v1/messages');
    expect(
      fake.api
        .body(0)
        .tools?.map((tool) => tool.name)
        .sort(),
    ).toEqual(['context_report', 'sensor', 'stall', 'weather']);
    const results = resultsOf(1);
    expect(results).toContainEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_w',
      content: [{ type: 'text', text: 'sunny in Oslo' }],
    });
    expect(results).toContainEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_s',
      content: [{ type: 'text', text: 'the sensor is offline' }],
      is_error: true,
    });
  });
});

describe('host.toRunnableTools()', () => {
  it('is toRunnableTools(host): the same tools, running in the same sandbox', async () => {
    const viaMethod = host.toRunnableTools();
    expect(viaMethod.map((tool) => tool.name).sort()).toEqual([
      'context_report',
      'sensor',
      'stall',
      'weather',
    ]);
    const weather = viaMethod.find((tool) => tool.name === 'weather');
    expect(
      weather !== undefined && 'input_schema' in weather ? weather.input_schema : undefined,
    ).toMatchObject({
      type: 'object',
    });
    expect(await weather?.run({ city: 'Lima' })).toEqual([{ type: 'text', text: 'sunny in Lima' }]);
  });
});
