import { describe, expect, it } from 'vitest';
import { runTools } from '../dist/src/index.js';
import {
  body,
  deferred,
  hang,
  loopError,
  loopTool,
  overloaded,
  reply,
  text,
  toolUse,
  useFakeApi,
} from './support/fake-messages-api.js';

const fake = useFakeApi();

describe('runTools: signal', () => {
  it('sends nothing when the signal is already aborted', async () => {
    const error = await loopError(runTools(fake.client, body(), { signal: AbortSignal.abort() }));

    expect(error.type).toBe('aborted');
    expect(error.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(fake.api.requests).toHaveLength(0);
  });

  it('aborts an in-flight request and carries the conversation that request sent', async () => {
    fake.api.script(reply([toolUse('t', {})]), hang());
    const controller = new AbortController();

    const running = runTools(fake.client, body(), {
      tools: [loopTool('t', () => 'x')],
      signal: controller.signal,
    });
    await fake.api.waitForRequests(2);
    controller.abort();
    const error = await loopError(running);

    expect(error.type).toBe('aborted');
    expect(error.messages).toEqual(fake.api.body(1).messages);
  });

  it('aborts an in-flight stream', async () => {
    fake.api.script(hang());
    const controller = new AbortController();

    const running = runTools(fake.client, body(), { signal: controller.signal, onEvent: () => {} });
    await fake.api.waitForRequests(1);
    controller.abort();

    expect((await loopError(running)).type).toBe('aborted');
  });

  it('aborts running tools through their signal and throws without waiting for them', async () => {
    const started = deferred();
    const toolAborted = deferred<boolean>();
    const stubborn = loopTool('stubborn', (_input, context) => {
      context.signal.addEventListener('abort', () => toolAborted.resolve(true));
      started.resolve();
      // Never settles, even when aborted: the loop must not wait for it.
      return new Promise<string>(() => {});
    });
    fake.api.script(reply([toolUse('stubborn', {})]), reply([text('never')]));
    const controller = new AbortController();

    const running = runTools(fake.client, body(), { tools: [stubborn], signal: controller.signal });
    await started.promise;
    controller.abort(new Error('user pressed stop'));
    const error = await loopError(running);

    expect(error.type).toBe('aborted');
    expect(error.cause).toMatchObject({ message: 'user pressed stop' });
    expect(await toolAborted.promise).toBe(true);
    expect(error.messages.at(-1)?.role).toBe('assistant');
    expect(fake.api.requests).toHaveLength(1);
  });

  it('stops waiting for a retry when aborted', async () => {
    fake.api.script(overloaded({ 'retry-after': '30' }), reply([text('never')]));
    const controller = new AbortController();

    const error = await loopError(
      runTools(fake.client, body(), {
        signal: controller.signal,
        retry: { minTimeoutMs: 1, onRetry: () => controller.abort() },
      }),
    );

    expect(error.type).toBe('aborted');
    expect(fake.api.requests).toHaveLength(1);
  });

  it('never reports success once aborted, even when the final reply has arrived', async () => {
    fake.api.script(reply([text('final answer')]));
    const controller = new AbortController();

    const error = await loopError(
      runTools(fake.client, body(), {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'message_stop') controller.abort();
        },
      }),
    );

    expect(error.type).toBe('aborted');
  });
});
