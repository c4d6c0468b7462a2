import { describe, expect, it } from 'vitest';
import { runTools, ToolLoopError } from '../dist/src/index.js';
import { body, loopTool, reply, text, toolUse, useFakeApi } from './support/fake-messages-api.js';

const fake = useFakeApi();

describe('runTools: the conversation', () => {
  it('runs the requested tool and returns the final response with the whole conversation', async () => {
    fake.api.script(
      reply([text('let me look'), toolUse('weather', { city: 'Oslo' }, 'toolu_a')]),
      reply([text('sunny')]),
    );
    const weather = loopTool('weather', (input) => `sunny in ${String(input['city'])}`);

    const { response, messages } = await runTools(fake.client, body('weather in Oslo?'), {
      tools: [weather],
    });

    expect(response.stop_reason).toBe('end_turn');
    expect(response.content).toEqual([{ type: 'text', text: 'sunny', citations: null }]);
    expect(messages).toEqual([
      { role: 'user', content: 'weather in Oslo?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'let me look', citations: null },
          { type: 'tool_use', id: 'toolu_a', name: 'weather', input: { city: 'Oslo' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: 'sunny in Oslo' }] },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'sunny', citations: null }] },
    ]);
    expect(fake.api.requests).toHaveLength(2);
    expect(fake.api.body(1).messages).toEqual(messages.slice(0, 3));
  });

  it('answers all calls of a turn in one user message, in the order of the calls', async () => {
    fake.api.script(
      reply([toolUse('a', {}, 'toolu_1'), toolUse('b', {}, 'toolu_2'), toolUse('a', { n: 2 }, 'toolu_3')]),
      reply([text('done')]),
    );
    const tools = [loopTool('a', (input) => `a${JSON.stringify(input)}`), loopTool('b', () => 'b')];

    const { messages } = await runTools(fake.client, body(), { tools });

    expect(messages).toHaveLength(4);
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'a{}' }] },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'b' }] },
        { type: 'tool_result', tool_use_id: 'toolu_3', content: [{ type: 'text', text: 'a{"n":2}' }] },
      ],
    });
  });

  it('keeps going over several turns and stops at the first reply that is neither tool_use nor pause_turn', async () => {
    fake.api.script(
      reply([toolUse('count', {})]),
      reply([toolUse('count', {})]),
      reply([text('truncated')], 'max_tokens'),
      reply([text('never sent')]),
    );
    let calls = 0;
    const count = loopTool('count', () => String(++calls));

    const { response, messages } = await runTools(fake.client, body(), { tools: [count] });

    expect(response.stop_reason).toBe('max_tokens');
    expect(calls).toBe(2);
    expect(fake.api.requests).toHaveLength(3);
    expect(messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'truncated', citations: null }],
    });
  });

  it('sends a pause_turn conversation again, unchanged, so the model can continue its turn', async () => {
    const search = { type: 'web_search_20250305', name: 'web_search' } as const;
    const searching = {
      type: 'other',
      block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'oslo' } },
    } as const;
    fake.api.script(reply([searching], 'pause_turn'), reply([text('found it')]));

    const { response, messages } = await runTools(fake.client, body('search', { tools: [search] }));

    expect(response.content).toEqual([{ type: 'text', text: 'found it', citations: null }]);
    expect(fake.api.requests).toHaveLength(2);
    expect(fake.api.body(1).messages).toEqual([
      { role: 'user', content: 'search' },
      { role: 'assistant', content: [searching.block] },
    ]);
    expect(messages).toHaveLength(3);
  });

  it('sends server tools unchanged and never runs them locally', async () => {
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 } as const;
    fake.api.script(reply([toolUse('web_search', { query: 'x' }, 'toolu_s')]), reply([text('ok')]));

    const { messages } = await runTools(fake.client, body('hi', { tools: [search] }));

    expect(fake.api.body(0).tools).toEqual([search]);
    // A `tool_use` for a name the loop cannot run is answered, not run.
    expect(messages[2]).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_s', is_error: true }],
    });
  });

  it('offers the body tools, then the loop tools, each without its run function', async () => {
    fake.api.script(reply([text('no tools needed')]));
    const inBody = loopTool('in_body', () => 'x', { concurrency: 'exclusive' });
    const inOptions = loopTool('in_options', () => 'y');

    await runTools(fake.client, body('hi', { tools: [inBody] }), { tools: [inOptions] });

    expect(fake.api.body(0).tools).toEqual([
      { name: 'in_body', description: 'the in_body tool', input_schema: { type: 'object', properties: {} } },
      {
        name: 'in_options',
        description: 'the in_options tool',
        input_schema: { type: 'object', properties: {} },
      },
    ]);
  });

  it('runs a tool given in the body with run, as the seed does', async () => {
    fake.api.script(reply([toolUse('clock', {}, 'toolu_c')]), reply([text('it is noon')]));
    const clock = loopTool('clock', () => '12:00');

    const { messages } = await runTools(fake.client, body('time?', { tools: [clock] }));

    expect(messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_c', content: [{ type: 'text', text: '12:00' }] }],
    });
  });

  it('passes the rest of the body with every request', async () => {
    fake.api.script(reply([toolUse('t', {})]), reply([text('ok')]));
    const request = body('hi', { system: 'be brief', stop_sequences: ['END'], metadata: { user_id: 'u1' } });

    await runTools(fake.client, request, { tools: [loopTool('t', () => 'x')] });

    for (const index of [0, 1]) {
      expect(fake.api.body(index)).toMatchObject({
        model: 'claude-test',
        max_tokens: 256,
        system: 'be brief',
        stop_sequences: ['END'],
        metadata: { user_id: 'u1' },
      });
    }
  });

  it('does not change the messages array of the body it was given', async () => {
    fake.api.script(reply([toolUse('t', {})]), reply([text('ok')]));
    const request = body('hi');

    const { messages } = await runTools(fake.client, request, { tools: [loopTool('t', () => 'x')] });

    expect(request.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(messages).toHaveLength(4);
  });
});

describe('runTools: the prompt form', () => {
  it('sends the prompt as the user message with the model option and the default max_tokens', async () => {
    fake.api.script(reply([text('hi there')]));

    const { response, messages } = await runTools(fake.client, 'say hi', { model: 'claude-prompt' });

    expect(response.content).toEqual([{ type: 'text', text: 'hi there', citations: null }]);
    expect(fake.api.body(0)).toEqual({
      model: 'claude-prompt',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'say hi' }],
    });
    expect(messages).toHaveLength(2);
  });

  it('takes the model from ANTHROPIC_MODEL, and maxTokens, system and tools from the options', async () => {
    fake.api.script(reply([toolUse('t', {})]), reply([text('ok')]));
    const saved = process.env['ANTHROPIC_MODEL'];
    process.env['ANTHROPIC_MODEL'] = 'claude-from-env';
    try {
      await runTools(fake.client, 'go', {
        maxTokens: 100,
        system: 'terse',
        tools: [loopTool('t', () => 'x')],
      });
    } finally {
      if (saved === undefined) delete process.env['ANTHROPIC_MODEL'];
      else process.env['ANTHROPIC_MODEL'] = saved;
    }

    expect(fake.api.body(0)).toMatchObject({ model: 'claude-from-env', max_tokens: 100, system: 'terse' });
    expect(fake.api.body(0).tools?.map((tool) => tool.name)).toEqual(['t']);
  });

  it('throws a clear error, before any request, when the prompt form has no model', async () => {
    const saved = process.env['ANTHROPIC_MODEL'];
    delete process.env['ANTHROPIC_MODEL'];
    try {
      await expect(runTools(fake.client, 'hi')).rejects.toMatchObject({
        name: 'ToolHostError',
        code: 'INVALID_OPTION',
        message: 'Expected `model` (or ANTHROPIC_MODEL) to be a non-empty string, got undefined',
      });
    } finally {
      if (saved !== undefined) process.env['ANTHROPIC_MODEL'] = saved;
    }
    expect(fake.api.requests).toHaveLength(0);
  });
});

describe('runTools: maxIterations', () => {
  it('throws max_iterations after 10 requests by default, with messages ending with the last assistant turn', async () => {
    for (let index = 0; index < 11; index++)
      fake.api.script(reply([toolUse('loop', {}, `toolu_it${index}`)]));
    let runs = 0;
    const again = loopTool('loop', () => {
      runs++;
      return 'again';
    });

    const error = await runTools(fake.client, body(), { tools: [again] }).catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(ToolLoopError);
    const loopError = error as ToolLoopError;
    expect(loopError.type).toBe('max_iterations');
    expect(fake.api.requests).toHaveLength(10);
    // The tool calls of the last turn did not run.
    expect(runs).toBe(9);
    expect(loopError.messages).toHaveLength(20);
    expect(loopError.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_it9', name: 'loop', input: {} }],
    });
  });

  it('counts requests, pause_turn resends included', async () => {
    fake.api.script(reply([text('thinking')], 'pause_turn'), reply([text('still')], 'pause_turn'));

    const error = (await runTools(fake.client, body(), { maxIterations: 2 }).catch(
      (thrown: unknown) => thrown,
    )) as ToolLoopError;

    expect(error.type).toBe('max_iterations');
    expect(fake.api.requests).toHaveLength(2);
    // Sending these messages again continues the paused turn.
    expect(error.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'still', citations: null }],
    });
  });

  it('returns normally when the last allowed request gets the final answer', async () => {
    fake.api.script(reply([toolUse('t', {})]), reply([text('done')]));

    const { response } = await runTools(fake.client, body(), {
      maxIterations: 2,
      tools: [loopTool('t', () => 'x')],
    });

    expect(response.content).toEqual([{ type: 'text', text: 'done', citations: null }]);
  });
});
