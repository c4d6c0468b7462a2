import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { type RetryInfo, runTools } from '../dist/src/index.js';
import {
  apiError,
  body,
  dropConnection,
  fastRetry,
  loopError,
  loopTool,
  overloaded,
  reply,
  text,
  toolUse,
  useFakeApi,
} from './support/fake-messages-api.js';

const fake = useFakeApi();

describe('runTools: retries', () => {
  it('retries an overloaded (529) request and then succeeds, sending the same body again', async () => {
    fake.api.script(overloaded(), reply([text('made it')]));

    const { response } = await runTools(fake.client, body(), { retry: fastRetry });

    expect(response.content).toEqual([{ type: 'text', text: 'made it', citations: null }]);
    expect(fake.api.requests).toHaveLength(2);
    expect(fake.api.body(1)).toEqual(fake.api.body(0));
  });

  it.each([
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [503, 'api_error'],
  ])('retries a %i response', async (status, type) => {
    fake.api.script(apiError(status, type), reply([text('ok')]));

    await runTools(fake.client, body(), { retry: fastRetry });

    expect(fake.api.requests).toHaveLength(2);
  });

  it('retries a connection that drops without an answer', async () => {
    fake.api.script(dropConnection(), reply([text('ok')]));

    await runTools(fake.client, body(), { retry: fastRetry });

    expect(fake.api.requests).toHaveLength(2);
  });

  it('does not retry a 400 and throws its type with the conversation that request sent', async () => {
    fake.api.script(
      apiError(400, 'invalid_request_error', { message: 'messages: bad' }),
      reply([text('never')]),
    );

    const error = await loopError(runTools(fake.client, body(), { retry: fastRetry }));

    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain('messages: bad');
    expect(error.messages).toEqual(fake.api.body(0).messages);
    expect(fake.api.requests).toHaveLength(1);
  });

  it('waits what retry-after asks when that is longer than the backoff', async () => {
    fake.api.script(
      apiError(429, 'rate_limit_error', { headers: { 'retry-after': '1' } }),
      reply([text('ok')]),
    );
    const retries: RetryInfo[] = [];

    await runTools(fake.client, body(), { retry: { ...fastRetry, onRetry: (retry) => retries.push(retry) } });

    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attemptNumber: 1, retriesLeft: 4, delayMs: 1000 });
    expect(retries[0]?.error).toMatchObject({ status: 429 });
  });

  it('prefers retry-after-ms (milliseconds) to retry-after (seconds)', async () => {
    fake.api.script(overloaded({ 'retry-after-ms': '40', 'retry-after': '30' }), reply([text('ok')]));
    const delays: number[] = [];

    await runTools(fake.client, body(), {
      retry: { ...fastRetry, onRetry: (retry) => delays.push(retry.delayMs) },
    });

    expect(delays).toEqual([40]);
  });

  it('keeps the backoff when retry-after asks for less', async () => {
    fake.api.script(
      overloaded({ 'retry-after': '0' }),
      overloaded({ 'retry-after': '0' }),
      reply([text('ok')]),
    );
    const delays: number[] = [];

    await runTools(fake.client, body(), {
      retry: { minTimeoutMs: 5, maxTimeoutMs: 1000, onRetry: (retry) => delays.push(retry.delayMs) },
    });

    expect(delays).toEqual([5, 10]);
  });

  it('does not wait a retry-after longer than maxTimeoutMs: it throws the error at once', async () => {
    fake.api.script(
      apiError(429, 'rate_limit_error', { headers: { 'retry-after': '3600' } }),
      reply([text('never')]),
    );

    const error = await loopError(runTools(fake.client, body(), { retry: fastRetry }));

    expect(error.type).toBe('rate_limit_error');
    expect(fake.api.requests).toHaveLength(1);
  });

  it('makes 1 + retries attempts (4 retries by default), then throws the last error', async () => {
    for (let index = 0; index < 6; index++) fake.api.script(overloaded());

    const error = await loopError(runTools(fake.client, body(), { retry: fastRetry }));

    expect(error.type).toBe('overloaded_error');
    expect(fake.api.requests).toHaveLength(5);
  });

  it('turns the SDK retries off per request, so attempts do not multiply', async () => {
    const client = new Anthropic({ apiKey: 'test', baseURL: fake.api.baseURL, maxRetries: 5 });
    for (let index = 0; index < 10; index++) fake.api.script(overloaded({ 'retry-after': '0' }));

    const error = await loopError(runTools(client, body(), { retry: { ...fastRetry, retries: 2 } }));

    expect(error.type).toBe('overloaded_error');
    expect(fake.api.requests).toHaveLength(3);
  });

  it('retries nothing with retries: 0', async () => {
    fake.api.script(overloaded(), reply([text('never')]));

    const error = await loopError(runTools(fake.client, body(), { retry: { retries: 0 } }));

    expect(error.type).toBe('overloaded_error');
    expect(fake.api.requests).toHaveLength(1);
  });

  it('reports connection_error when the connection keeps dropping', async () => {
    fake.api.script(dropConnection(), dropConnection());

    const error = await loopError(runTools(fake.client, body(), { retry: { ...fastRetry, retries: 1 } }));

    expect(error.type).toBe('connection_error');
    expect(error.messages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});

describe('runTools: resending after a failure', () => {
  it('carries, after a failure on the third request, exactly the conversation it sent, and resending it works', async () => {
    fake.api.script(
      reply([toolUse('step', { n: 1 }, 'toolu_1')]),
      reply([toolUse('step', { n: 2 }, 'toolu_2')]),
      overloaded(),
    );
    const step = loopTool('step', (input) => `step ${String(input['n'])} done`);

    const error = await loopError(
      runTools(fake.client, body('go'), { tools: [step], retry: { retries: 0 } }),
    );

    expect(error.type).toBe('overloaded_error');
    expect(fake.api.requests).toHaveLength(3);
    expect(error.messages).toEqual(fake.api.body(2).messages);
    expect(error.messages).toHaveLength(5);
    expect(error.messages.at(-1)?.role).toBe('user');

    fake.api.script(reply([text('all steps done')]));
    const { response, messages } = await runTools(fake.client, body('go', { messages: error.messages }), {
      tools: [step],
    });

    expect(fake.api.body(3).messages).toEqual(fake.api.body(2).messages);
    expect(response.content).toEqual([{ type: 'text', text: 'all steps done', citations: null }]);
    expect(messages).toHaveLength(6);
  });

  it('gives every error its own copy of the conversation', async () => {
    fake.api.script(apiError(400, 'invalid_request_error'));
    const request = body();

    const error = await loopError(runTools(fake.client, request, { retry: { retries: 0 } }));
    error.messages.push({ role: 'user', content: 'changed' });

    expect(request.messages).toHaveLength(1);
  });
});
