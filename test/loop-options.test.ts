import { describe, expect, it } from 'vitest';
import { type RunToolsOptions, runTools, type ToolLoopBody } from '../dist/src/index.js';
import { body, loopTool, useFakeApi } from './support/fake-messages-api.js';

const fake = useFakeApi();

async function rejection(request: ToolLoopBody | string, options: unknown): Promise<unknown> {
  return runTools(fake.client, request, options as RunToolsOptions).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
}

describe('runTools: options are checked before anything is sent', () => {
  it.each([
    [{ maxIterations: -5 }, 'Expected `maxIterations` to be a positive integer, got -5'],
    [{ maxIterations: 1.5 }, 'Expected `maxIterations` to be a positive integer, got 1.5'],
    [{ maxConcurrency: 0 }, 'Expected `maxConcurrency` to be a positive integer, got 0'],
    [{ toolTimeoutMs: '5s' }, 'Expected `toolTimeoutMs` to be a positive integer, got "5s"'],
    [{ onEvent: 'log' }, 'Expected `onEvent` to be a function, got "log"'],
    [{ beforeToolCall: true }, 'Expected `beforeToolCall` to be a function, got true'],
    [{ signal: {} }, 'Expected `signal` to be an AbortSignal, got {}'],
    [{ withheld: 'secret' }, 'Expected `withheld` to be an array of strings, got "secret"'],
    [{ withheld: [1] }, 'Expected `withheld` to be an array of strings, got [1]'],
    [{ host: {} }, 'Expected `host` to have list() and call() methods, got {}'],
    [{ tools: {} }, 'Expected `tools` to be an array, got {}'],
    [{ tools: [{ name: 't' }] }, 'Expected `tools[0].run` to be a function, got undefined'],
    [{ tools: [{ run: () => '' }] }, 'Expected `tools[0].name` to be a non-empty string, got undefined'],
    [{ retry: { retries: -1 } }, 'Expected `retry.retries` to be a non-negative integer, got -1'],
    [{ retry: { minTimeoutMs: -1 } }, 'Expected `retry.minTimeoutMs` to be a non-negative integer, got -1'],
    [
      { retry: { minTimeoutMs: 500, maxTimeoutMs: 100 } },
      'Expected `retry.maxTimeoutMs` to be at least `retry.minTimeoutMs` (500), got 100',
    ],
    [{ retry: { onRetry: 1 } }, 'Expected `retry.onRetry` to be a function, got 1'],
    [
      { model: 'claude-x' },
      'Expected no `model` option with a request body (put it in the body), got "claude-x"',
    ],
  ])('rejects %j with an exact message', async (options, message) => {
    const error = await rejection(body(), options);

    expect(error).toMatchObject({ name: 'ToolHostError', code: 'INVALID_OPTION', message });
    expect(fake.api.requests).toHaveLength(0);
  });

  it.each([
    [
      body('x', { stream: true } as never),
      'Expected a body without `stream` (pass `onEvent` to stream), got true',
    ],
    [{ model: 'm', max_tokens: 1 } as never, 'Expected `messages` to be an array, got undefined'],
    [42 as never, 'Expected a prompt string or a request body, got 42'],
    ['', 'Expected the prompt to be a non-empty string, got ""'],
  ])('rejects the request %j with an exact message', async (request, message) => {
    const error = await rejection(request, { model: typeof request === 'string' ? 'm' : undefined });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', message });
  });

  it('rejects a bad maxTokens in the prompt form', async () => {
    const error = await rejection('hi', { model: 'm', maxTokens: 0 });
    expect(error).toMatchObject({ message: 'Expected `maxTokens` to be a positive integer, got 0' });
  });

  it('rejects two tools with the same name across the body and the options', async () => {
    const error = await rejection(body('hi', { tools: [loopTool('dup', () => '')] }), {
      tools: [loopTool('dup', () => '')],
    });
    expect(error).toMatchObject({
      code: 'INVALID_OPTION',
      message: 'Expected tool names to be unique, got "dup" twice',
    });
  });
});
