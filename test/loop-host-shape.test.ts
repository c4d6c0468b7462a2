import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import type { ToolInfo, ToolOutcome } from '../dist/src/index.js';
import { type LoopHost, type LoopHostCallOptions, runTools, ToolLoopError } from '../dist/src/index.js';
import { body, reply, text, toolUse, useFakeApi } from './support/fake-messages-api.js';

const fake = useFakeApi();

function info(name: string, extra: Partial<ToolInfo> = {}): ToolInfo {
  return {
    name,
    description: `host tool ${name}`,
    parameterSchema: { type: 'object' },
    timeoutMs: 30_000,
    concurrency: 'parallel',
    ...extra,
  };
}

/** A host-shaped object: the loop needs nothing but list() and call(). */
function fakeHost(tools: ToolInfo[], call: LoopHost['call'] = async (name) => ok(`ran ${name}`)) {
  const calls: Array<{ name: string; args: unknown; options: LoopHostCallOptions | undefined }> = [];
  const host: LoopHost = {
    list: () => tools,
    call: (name, args, options) => {
      calls.push({ name, args, options });
      return call(name, args, options);
    },
  };
  return { host, calls, tools };
}

function ok(value: string): ToolOutcome {
  return { content: [{ type: 'text', text: value }], isError: false };
}

describe('runTools with any host-shaped object', () => {
  it('passes the tool_use id, the withheld names, the signal and toolTimeoutMs to host.call', async () => {
    const { host, calls } = fakeHost([info('lookup')]);
    fake.api.script(reply([toolUse('lookup', { q: 'x' }, 'toolu_l')]), reply([text('ok')]));
    const controller = new AbortController();

    await runTools(fake.client, body(), {
      host,
      withheld: ['secret'],
      toolTimeoutMs: 1234,
      signal: controller.signal,
    });

    expect(calls).toHaveLength(1);
    expect(calls[0]?.name).toBe('lookup');
    expect(calls[0]?.args).toEqual({ q: 'x' });
    expect(calls[0]?.options).toMatchObject({ callId: 'toolu_l', withheld: ['secret'], timeoutMs: 1234 });
    expect(calls[0]?.options?.signal).toBeInstanceOf(AbortSignal);
    controller.abort();
    expect(calls[0]?.options?.signal?.aborted).toBe(true);
  });

  it('passes no timeoutMs without toolTimeoutMs (each host tool keeps its own)', async () => {
    const { host, calls } = fakeHost([info('lookup')]);
    fake.api.script(reply([toolUse('lookup', {})]), reply([text('ok')]));

    await runTools(fake.client, body(), { host });

    expect(calls[0]?.options).not.toHaveProperty('timeoutMs');
  });

  it('takes a fresh snapshot of the offered tools for every request', async () => {
    const { host, tools } = fakeHost([info('first')]);
    fake.api.script(reply([toolUse('first', {})]), reply([text('ok')]));
    const run = runTools(fake.client, body(), { host });
    await fake.api.waitForRequests(1);
    tools.push(info('second'));
    await run;

    expect(fake.api.body(0).tools?.map((tool) => tool.name)).toEqual(['first']);
    expect(fake.api.body(1).tools?.map((tool) => tool.name)).toEqual(['first', 'second']);
  });

  it('sends host outcomes as tool_results: content as it is, is_error when set', async () => {
    const { host } = fakeHost([info('a'), info('b')], async (name) =>
      name === 'a'
        ? { content: [], isError: false }
        : {
            content: [{ type: 'text', text: 'bad' }],
            isError: true,
            error: { code: 'TOOL_THREW', message: 'bad' },
          },
    );
    fake.api.script(reply([toolUse('a', {}, 'toolu_a'), toolUse('b', {}, 'toolu_b')]), reply([text('ok')]));

    await runTools(fake.client, body(), { host });

    expect(fake.api.body(1).messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a' },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_b',
        content: [{ type: 'text', text: 'bad' }],
        is_error: true,
      },
    ]);
  });

  it('runs the calls of a turn with an exclusive host tool one at a time, in the model order', async () => {
    const log: string[] = [];
    const { host } = fakeHost(
      [info('read'), info('write', { concurrency: 'exclusive' })],
      async (name, args) => {
        const entry = `${name} ${String((args as { n: number }).n)}`;
        log.push(`start ${entry}`);
        await yieldToEventLoop();
        log.push(`end ${entry}`);
        return ok(entry);
      },
    );
    fake.api.script(
      reply([toolUse('read', { n: 1 }), toolUse('read', { n: 2 }), toolUse('write', { n: 3 })]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), { host });

    expect(log).toEqual([
      'start read 1',
      'end read 1',
      'start read 2',
      'end read 2',
      'start write 3',
      'end write 3',
    ]);
    const results = fake.api.body(1).messages[2]?.content as ToolResultBlockParam[];
    expect(results.map((result) => result.content)).toEqual(
      ['read 1', 'read 2', 'write 3'].map((entry) => [{ type: 'text', text: entry }]),
    );
  });

  it('ends with tool_host_error when host.call rejects (a host failure, not a tool fault)', async () => {
    const { host } = fakeHost([info('lookup')], () => Promise.reject(new Error('pool exploded')));
    fake.api.script(reply([toolUse('lookup', {})]), reply([text('never')]));

    const error = (await runTools(fake.client, body(), { host }).catch(
      (thrown: unknown) => thrown,
    )) as ToolLoopError;

    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error.type).toBe('tool_host_error');
    expect(error.message).toBe('host.call("lookup") threw: pool exploded');
    expect(error.messages.at(-1)?.role).toBe('assistant');
    expect(fake.api.requests).toHaveLength(1);
  });

  it('ends with tool_host_error, before sending, when host.list throws', async () => {
    const host: LoopHost = {
      list: () => {
        throw new Error('registry corrupt');
      },
      call: async () => ok('never'),
    };

    const error = (await runTools(fake.client, body(), { host }).catch(
      (thrown: unknown) => thrown,
    )) as ToolLoopError;

    expect(error.type).toBe('tool_host_error');
    expect(error.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(fake.api.requests).toHaveLength(0);
  });
});
