/**
 * `runTools` with SDK clients as users build them: from the SDK's ES module build (toolhost's own
 * import), from its CommonJS build (what `require` and many TypeScript setups load: other classes),
 * and from SDK 0.39 (an older version that apps still pin, before the SDK's fetch rewrite: errors
 * without names, headers as a plain object). The loop reads errors by what they carry, so its
 * retries, its `ToolLoopError.type` and its `messages` are the same for all of them.
 */
import { createRequire } from 'node:module';
import Anthropic from '@anthropic-ai/sdk';
import Anthropic039 from 'anthropic-sdk-0.39';
import { describe, expect, it } from 'vitest';
import { type MessagesClient, runTools } from '../dist/src/index.js';
import {
  apiError,
  body,
  dropConnection,
  fastRetry,
  hang,
  loopError,
  loopTool,
  overloaded,
  reply,
  text,
  toolUse,
  useFakeApi,
} from './support/fake-messages-api.js';

const require = createRequire(import.meta.url);
const AnthropicCjs = require('@anthropic-ai/sdk').Anthropic as typeof Anthropic;
const Anthropic039Cjs = require('anthropic-sdk-0.39').Anthropic as typeof Anthropic039;

type ClientOptions = { apiKey: string; baseURL: string };

/** Each client as a user would pass it; each type-checks as a `MessagesClient` as it is. */
const CLIENTS: Array<[string, (options: ClientOptions) => MessagesClient]> = [
  ['the ES module build', (options) => new Anthropic(options)],
  ['the CommonJS build', (options) => new AnthropicCjs(options)],
  ['SDK 0.39 (ES module)', (options) => new Anthropic039(options)],
  ['SDK 0.39 (CommonJS)', (options) => new Anthropic039Cjs(options)],
];

const fake = useFakeApi();

it("the CommonJS build's error classes are not the ES module build's (why the loop can't use instanceof)", () => {
  expect(AnthropicCjs.APIError).not.toBe(Anthropic.APIError);
  expect(Anthropic039.APIError).not.toBe(Anthropic.APIError);
});

describe.each(CLIENTS)('runTools with a client from %s', (_name, makeClient) => {
  const client = () => makeClient({ apiKey: 'test', baseURL: fake.api.baseURL });

  it('retries an overloaded (529) request that says retry-after: 0, then succeeds', async () => {
    fake.api.script(overloaded({ 'retry-after': '0' }), reply([text('made it')]));

    const { response, messages } = await runTools(client(), body(), { retry: fastRetry });

    expect(fake.api.requests).toHaveLength(2);
    expect(fake.api.body(1)).toEqual(fake.api.body(0));
    expect(response.content).toMatchObject([{ type: 'text', text: 'made it' }]);
    expect(messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: response.content },
    ]);
  });

  it('retries a streamed 529 the same way', async () => {
    fake.api.script(overloaded({ 'retry-after': '0' }), reply([text('streamed')]));
    const events: string[] = [];

    const { response } = await runTools(client(), body(), {
      retry: fastRetry,
      onEvent: (event) => events.push(event.type),
    });

    expect(fake.api.requests).toHaveLength(2);
    expect(response.content).toMatchObject([{ type: 'text', text: 'streamed' }]);
    expect(events[0]).toBe('message_start');
  });

  it('waits what retry-after-ms asks, read from the headers as this SDK holds them', async () => {
    fake.api.script(apiError(429, 'rate_limit_error', { headers: { 'retry-after-ms': '30' } }), reply([]));
    const delays: number[] = [];

    await runTools(client(), body(), {
      retry: { ...fastRetry, onRetry: (retry) => delays.push(retry.delayMs) },
    });

    expect(delays).toEqual([30]);
  });

  it('retries a stream that an overloaded_error event breaks off', async () => {
    fake.api.script(
      {
        ...reply([text('cut')]),
        breakAfter: { events: 2, with: { type: 'overloaded_error', message: 'Overloaded' } },
      },
      reply([text('whole')]),
    );

    const { response } = await runTools(client(), body(), { retry: fastRetry, onEvent: () => {} });

    expect(fake.api.requests).toHaveLength(2);
    expect(response.content).toMatchObject([{ type: 'text', text: 'whole' }]);
  });

  it("throws the API's error type after the retries, with the conversation that request sent", async () => {
    fake.api.script(
      reply([toolUse('step', {}, 'toolu_1')]),
      overloaded({ 'retry-after': '0' }),
      overloaded({ 'retry-after': '0' }),
    );

    const error = await loopError(
      runTools(client(), body('go'), {
        tools: [loopTool('step', () => 'stepped')],
        retry: { ...fastRetry, retries: 1 },
      }),
    );

    expect(error.type).toBe('overloaded_error');
    expect(fake.api.requests).toHaveLength(3);
    expect(error.messages).toEqual(fake.api.body(2).messages);
    expect(error.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('does not retry a 400, and names its type', async () => {
    fake.api.script(apiError(400, 'invalid_request_error', { message: 'messages: bad' }), reply([]));

    const error = await loopError(runTools(client(), body(), { retry: fastRetry }));

    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain('messages: bad');
    expect(error.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(fake.api.requests).toHaveLength(1);
  });

  it('retries a dropped connection, then throws connection_error', async () => {
    fake.api.script(dropConnection(), dropConnection());

    const error = await loopError(runTools(client(), body(), { retry: { ...fastRetry, retries: 1 } }));

    expect(error.type).toBe('connection_error');
    expect(fake.api.requests).toHaveLength(2);
  });

  it('throws aborted when the signal aborts a request in flight', async () => {
    fake.api.script(hang());
    const controller = new AbortController();

    const pending = loopError(runTools(client(), body(), { signal: controller.signal }));
    await fake.api.waitForRequests(1);
    controller.abort();
    const error = await pending;

    expect(error.type).toBe('aborted');
    expect(error.messages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});
