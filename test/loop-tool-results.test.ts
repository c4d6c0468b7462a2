import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { errorResult, type LoopTool, type LoopToolContext, runTools, toolResult } from '../dist/src/index.js';
import { body, loopTool, reply, text, toolUse, useFakeApi } from './support/fake-messages-api.js';

const fake = useFakeApi();

/** Runs one turn calling `name` with `input` and returns the one tool_result the loop sent back. */
async function resultOf(
  tools: LoopTool[],
  name: string,
  input: unknown = {},
  options = {},
): Promise<ToolResultBlockParam> {
  fake.api.script(reply([toolUse(name, input, 'toolu_x')]), reply([text('ok')]));
  await runTools(fake.client, body(), { tools, ...options });
  const results = fake.api.requests.at(-1)?.body.messages[2]?.content as ToolResultBlockParam[];
  expect(results).toHaveLength(1);
  return results[0] as ToolResultBlockParam;
}

describe('runTools: what a loop tool answers', () => {
  it('sends content blocks as they are', async () => {
    const blocks = [
      { type: 'text' as const, text: 'a chart' },
      {
        type: 'image' as const,
        source: {
          type: 'base64' as const,
          media_type: 'image/png' as const,
          data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
        },
      },
    ];
    const result = await resultOf([loopTool('chart', () => blocks)], 'chart');
    expect(result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_x', content: blocks });
  });

  it('marks { content, isError: true } as an error result', async () => {
    const result = await resultOf([loopTool('t', () => ({ content: 'no such city', isError: true }))], 't');
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      content: [{ type: 'text', text: 'no such city' }],
      is_error: true,
    });
  });

  it("accepts the tool authors' helpers toolResult() and errorResult()", async () => {
    const ok = await resultOf([loopTool('t', () => toolResult('fine', { details: { hidden: true } }))], 't');
    expect(ok).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      content: [{ type: 'text', text: 'fine' }],
    });
    const failed = await resultOf([loopTool('t', () => errorResult('broken'))], 't');
    expect(failed).toMatchObject({ content: [{ type: 'text', text: 'broken' }], is_error: true });
  });

  it('omits the content of an empty result', async () => {
    const result = await resultOf([loopTool('t', () => '')], 't');
    expect(result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_x' });
  });

  it('sends any other value as JSON', async () => {
    const result = await resultOf([loopTool('t', () => ({ temperature: 21 }) as never)], 't');
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      content: [{ type: 'text', text: '{"temperature":21}' }],
    });
  });

  it('turns a throw into an error result with its message, and the loop goes on', async () => {
    const result = await resultOf(
      [
        loopTool('t', () => {
          throw new Error('disk full');
        }),
      ],
      't',
    );
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      content: [{ type: 'text', text: 'disk full' }],
      is_error: true,
    });
    expect(fake.api.requests).toHaveLength(2);
  });

  it('renders a rejection with a non-Error readably instead of treating it as success', async () => {
    const result = await resultOf([loopTool('t', () => Promise.reject(null))], 't');
    expect(result).toMatchObject({
      content: [{ type: 'text', text: 'the tool threw null' }],
      is_error: true,
    });
  });

  it('gives the tool its input, the tool_use id, a signal and the withheld names', async () => {
    let seen: { input: unknown; context: LoopToolContext } | undefined;
    const spy = loopTool('spy', (input, context) => {
      seen = { input, context };
      return 'ok';
    });

    await resultOf([spy], 'spy', { q: 'x' }, { withheld: ['secret'] });

    expect(seen?.input).toEqual({ q: 'x' });
    expect(seen?.context.callId).toBe('toolu_x');
    expect(seen?.context.signal).toBeInstanceOf(AbortSignal);
    expect(seen?.context.signal.aborted).toBe(false);
    expect(seen?.context.withheld).toEqual(['secret']);
  });
});

describe('runTools: calls that cannot run', () => {
  it('answers an unknown tool name with an error result naming the available tools', async () => {
    const result = await resultOf([loopTool('alpha', () => 'a'), loopTool('beta', () => 'b')], 'gamma');
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      content: [{ type: 'text', text: 'unknown tool "gamma"; available tools: alpha, beta' }],
      is_error: true,
    });
  });

  it('says so when no tools are available at all', async () => {
    const result = await resultOf([], 'anything');
    expect(result).toMatchObject({
      is_error: true,
      content: [{ type: 'text', text: 'unknown tool "anything"; available tools: (none)' }],
    });
  });

  it('never resolves names through the prototype chain', async () => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const result = await resultOf([loopTool('alpha', () => 'a')], name);
      expect(result).toMatchObject({
        is_error: true,
        content: [{ type: 'text', text: `unknown tool "${name}"; available tools: alpha` }],
      });
    }
  });

  it('neither offers nor runs a withheld tool', async () => {
    let ran = false;
    const hidden = loopTool('hidden', () => {
      ran = true;
      return 'secret';
    });
    const result = await resultOf(
      [hidden, loopTool('visible', () => 'v')],
      'hidden',
      {},
      { withheld: ['hidden'] },
    );

    expect(fake.api.body(0).tools?.map((tool) => tool.name)).toEqual(['visible']);
    expect(ran).toBe(false);
    expect(result).toMatchObject({
      is_error: true,
      content: [{ type: 'text', text: 'unknown tool "hidden"; available tools: visible' }],
    });
  });

  it('withholds body tools and server tools by name too', async () => {
    fake.api.script(reply([text('ok')]));
    const search = { type: 'web_search_20250305', name: 'web_search' } as const;

    await runTools(fake.client, body('hi', { tools: [search, loopTool('b', () => 'b')] }), {
      withheld: ['web_search', 'b'],
    });

    expect(fake.api.body(0).tools).toBeUndefined();
  });
});

describe('runTools: beforeToolCall', () => {
  it('asks the gate before each call, with its name, input and id', async () => {
    const asked: unknown[] = [];
    fake.api.script(
      reply([toolUse('t', { n: 1 }, 'toolu_1'), toolUse('t', { n: 2 }, 'toolu_2')]),
      reply([text('ok')]),
    );

    await runTools(fake.client, body(), {
      tools: [loopTool('t', () => 'ran')],
      beforeToolCall: (call) => {
        asked.push(call);
        return { allow: true };
      },
    });

    expect(asked).toEqual([
      { id: 'toolu_1', name: 't', input: { n: 1 } },
      { id: 'toolu_2', name: 't', input: { n: 2 } },
    ]);
  });

  it('runs nothing for a blocked call and answers an error result with the reason', async () => {
    let runs = 0;
    const tool = loopTool('delete_file', () => {
      runs++;
      return 'deleted';
    });
    const result = await resultOf(
      [tool],
      'delete_file',
      { path: '/etc' },
      {
        beforeToolCall: async () => ({ allow: false, reason: 'deleting files needs approval' }),
      },
    );

    expect(runs).toBe(0);
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      content: [{ type: 'text', text: 'deleting files needs approval' }],
      is_error: true,
    });
  });

  it('takes a boolean answer, and blocks with a default reason when none is given', async () => {
    const allowed = await resultOf([loopTool('t', () => 'ran')], 't', {}, { beforeToolCall: () => true });
    expect(allowed).toMatchObject({ content: [{ type: 'text', text: 'ran' }] });

    const blocked = await resultOf([loopTool('t', () => 'ran')], 't', {}, { beforeToolCall: () => false });
    expect(blocked).toMatchObject({
      content: [{ type: 'text', text: 'the call to "t" was blocked' }],
      is_error: true,
    });
  });

  it('blocks on an answer that is neither true nor { allow: true } (fails closed)', async () => {
    const result = await resultOf(
      [loopTool('t', () => 'ran')],
      't',
      {},
      { beforeToolCall: () => undefined as never },
    );
    expect(result).toMatchObject({ is_error: true });
  });

  it('ends the loop with callback_error when the gate throws', async () => {
    fake.api.script(reply([toolUse('t', {})]));
    const error = await runTools(fake.client, body(), {
      tools: [loopTool('t', () => 'ran')],
      beforeToolCall: () => {
        throw new Error('policy store down');
      },
    }).catch((thrown: unknown) => thrown);

    expect(error).toMatchObject({
      name: 'ToolLoopError',
      type: 'callback_error',
      message: 'beforeToolCall threw: policy store down',
    });
    expect((error as { messages: unknown[] }).messages).toHaveLength(2);
  });
});
