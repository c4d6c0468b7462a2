import type { RawMessageStreamEvent, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { runTools, ToolLoopError } from '../dist/src/index.js';
import {
  body,
  fastRetry,
  loopTool,
  rawToolUse,
  reply,
  text,
  toolUse,
  useFakeApi,
} from './support/fake-messages-api.js';

const fake = useFakeApi();

const TURN_WITH_TEXT_AND_TOOL = [
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_delta',
  'content_block_stop',
  'content_block_start',
  'content_block_delta',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
];
const TURN_WITH_TEXT = [
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
];

describe('runTools: onEvent', () => {
  it('streams every turn and gets every raw event of every turn in order, each turn from its message_start', async () => {
    fake.api.script(
      reply([text('checking'), toolUse('weather', { city: 'Oslo' }, 'toolu_w')]),
      reply([text('sunny all day')]),
    );
    const events: RawMessageStreamEvent[] = [];

    const { response, messages } = await runTools(fake.client, body(), {
      tools: [loopTool('weather', () => 'sunny')],
      onEvent: (event) => events.push(event),
    });

    expect(events.map((event) => event.type)).toEqual([...TURN_WITH_TEXT_AND_TOOL, ...TURN_WITH_TEXT]);
    expect(fake.api.requests.map((request) => request.body.stream)).toEqual([true, true]);
    // The streamed turns are assembled into the same messages a plain request gets.
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'checking', citations: null },
        { type: 'tool_use', id: 'toolu_w', name: 'weather', input: { city: 'Oslo' } },
      ],
    });
    expect(response).toMatchObject({
      role: 'assistant',
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'sunny all day', citations: null }],
      usage: { output_tokens: 20 },
    });
    const starts = events.filter((event) => event.type === 'message_start');
    expect(starts.map((event) => event.message.id)).toEqual(['msg_fake_1', 'msg_fake_2']);
  });

  it('sends plain requests without onEvent', async () => {
    fake.api.script(reply([text('hi')]));
    await runTools(fake.client, body());
    expect(fake.api.body(0)).not.toHaveProperty('stream');
  });

  it('ends the loop with callback_error when onEvent throws, without retrying', async () => {
    fake.api.script(reply([text('hi')]), reply([text('never')]));

    const error = (await runTools(fake.client, body(), {
      retry: fastRetry,
      onEvent: () => {
        throw new Error('screen gone');
      },
    }).catch((thrown: unknown) => thrown)) as ToolLoopError;

    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error.type).toBe('callback_error');
    expect(error.cause).toMatchObject({ message: 'screen gone' });
    expect(error.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(fake.api.requests).toHaveLength(1);
  });
});

describe('runTools: a streamed call without arguments', () => {
  it('runs the tool with {} when its input streams as one empty delta', async () => {
    fake.api.script(reply([rawToolUse('clock', '', 'toolu_clock')]), reply([text('noon')]));
    const inputs: unknown[] = [];

    const { messages } = await runTools(fake.client, body(), {
      tools: [
        loopTool('clock', (input) => {
          inputs.push(input);
          return 'noon';
        }),
      ],
      onEvent: () => {},
    });

    expect(inputs).toEqual([{}]);
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_clock', name: 'clock', input: {} }],
    });
    const results = messages[2]?.content as ToolResultBlockParam[];
    expect(results).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_clock', content: [{ type: 'text', text: 'noon' }] },
    ]);
  });
});

describe('runTools: eager_input_streaming input that is not valid JSON', () => {
  const weather = loopTool('weather', () => 'sunny', { eager_input_streaming: true });

  async function runWithInput(inputJson: string) {
    let runs = 0;
    const counting = { ...weather, run: () => `sunny ${++runs}` };
    fake.api.script(reply([rawToolUse('weather', inputJson, 'toolu_bad')]), reply([text('sorry')]));
    const result = await runTools(fake.client, body(), { tools: [counting], onEvent: () => {} });
    return { ...result, runs };
  }

  it.each([
    ['not JSON at all', '{"city": Berlin}'],
    ['cut off (the SDK would quietly repair it)', '{"city": "Ber'],
    ['JSON that is not an object', '["Berlin"]'],
  ])(
    'runs no tool for input that is %s, answers the error, and keeps {} as that input',
    async (_case, inputJson) => {
      const { runs, messages } = await runWithInput(inputJson);

      expect(runs).toBe(0);
      expect(messages[1]).toEqual({
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_bad', name: 'weather', input: {} }],
      });
      expect(messages[2]).toEqual({
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_bad',
            content: [{ type: 'text', text: 'the tool input is not valid JSON' }],
            is_error: true,
          },
        ],
      });
      // The replayed turn is what the API accepts: an object as the input.
      expect(fake.api.body(1).messages[1]).toEqual(messages[1]);
    },
  );

  it('sends the eager_input_streaming flag unchanged', async () => {
    await runWithInput('{"city": "Berlin"}');
    expect(fake.api.body(0).tools).toEqual([
      {
        name: 'weather',
        description: 'the weather tool',
        input_schema: { type: 'object', properties: {} },
        eager_input_streaming: true,
      },
    ]);
  });

  it('runs the valid calls of the same turn', async () => {
    let runs = 0;
    const counting = { ...weather, run: () => `sunny ${++runs}` };
    fake.api.script(
      reply([
        rawToolUse('weather', '{"city": "Os', 'toolu_1'),
        toolUse('weather', { city: 'Oslo' }, 'toolu_2'),
      ]),
      reply([text('ok')]),
    );

    const { messages } = await runTools(fake.client, body(), { tools: [counting], onEvent: () => {} });

    expect(runs).toBe(1);
    const results = messages[2]?.content as ToolResultBlockParam[];
    expect(results.map((result) => result.is_error === true)).toEqual([true, false]);
    expect(results[1]?.content).toEqual([{ type: 'text', text: 'sunny 1' }]);
  });

  it('treats a non-streamed tool input that is not an object the same way', async () => {
    let runs = 0;
    fake.api.script(reply([rawToolUse('weather', '{"city": Berlin}', 'toolu_bad')]), reply([text('sorry')]));

    const { messages } = await runTools(fake.client, body(), {
      tools: [{ ...weather, run: () => String(++runs) }],
    });

    expect(runs).toBe(0);
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_bad', name: 'weather', input: {} }],
    });
    expect(messages[2]).toMatchObject({
      content: [{ content: [{ type: 'text', text: 'the tool input is not valid JSON' }], is_error: true }],
    });
  });
});

describe('runTools: streams that fail', () => {
  it('retries a stream that ends with an overloaded error event, and onEvent sees the new message_start', async () => {
    fake.api.script(
      {
        ...reply([text('partial answer')]),
        breakAfter: { events: 3, with: { type: 'overloaded_error', message: 'Overloaded' } },
      },
      reply([text('full answer')]),
    );
    const types: string[] = [];

    const { response } = await runTools(fake.client, body(), {
      retry: fastRetry,
      onEvent: (event) => types.push(event.type),
    });

    expect(response.content).toEqual([{ type: 'text', text: 'full answer', citations: null }]);
    expect(types).toEqual(['message_start', 'content_block_start', 'content_block_delta', ...TURN_WITH_TEXT]);
    expect(fake.api.requests).toHaveLength(2);
    expect(fake.api.body(1)).toEqual(fake.api.body(0));
  });

  it('retries a stream whose connection drops midway', async () => {
    fake.api.script(
      { ...reply([text('partial answer')]), breakAfter: { events: 4, with: 'drop' } },
      reply([text('full')]),
    );

    const { response } = await runTools(fake.client, body(), { retry: fastRetry, onEvent: () => {} });

    expect(response.content).toEqual([{ type: 'text', text: 'full', citations: null }]);
    expect(fake.api.requests).toHaveLength(2);
  });

  it('retries a stream that ends before message_stop, and reports connection_error when retries run out', async () => {
    const cut = { ...reply([text('partial')]), breakAfter: { events: 5, with: 'drop' as const } };
    fake.api.script(cut, cut);

    const error = (await runTools(fake.client, body(), {
      retry: { ...fastRetry, retries: 1 },
      onEvent: () => {},
    }).catch((thrown: unknown) => thrown)) as ToolLoopError;

    expect(error.type).toBe('connection_error');
    expect(error.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(fake.api.requests).toHaveLength(2);
  });
});
