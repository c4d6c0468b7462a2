/**
 * The built `toolhost chat` against the local fake Messages API (ANTHROPIC_BASE_URL): the model's
 * text streamed to stdout, a line per tool call and outcome, --json, and API failures as exit 1.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDir, PACKAGES, runCli, startCli } from './support/cli-run.js';
import { apiError, FakeMessagesApi, hang, reply, text, toolUse } from './support/fake-messages-api.js';

let api: FakeMessagesApi;
let tmp: ReturnType<typeof freshDir>;

beforeEach(async () => {
  api = await FakeMessagesApi.start();
  tmp = freshDir('cli-chat-tmp');
});
afterEach(async () => {
  await api.close();
  tmp.remove();
});

const chat = (args: string[], env: Record<string, string> = {}) =>
  runCli(['chat', ...args], {
    tmpDir: tmp.path,
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.baseURL, ...env },
  });

const converter = join(PACKAGES, 'unit-converter');

describe('toolhost chat', () => {
  it('streams the model’s text and shows each tool call and its outcome', async () => {
    api.script(
      reply([
        text('Let me convert that.'),
        toolUse('convert_length', { value: 5, from: 'km', to: 'mi' }, 'toolu_a'),
      ]),
      reply([text('5 km is about 3.11 miles.')]),
    );
    const result = await chat(['--tools', converter, '--model', 'claude-test', 'How far is 5 km in miles?']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'Let me convert that.',
        '→ convert_length {"value":5,"from":"km","to":"mi"}',
        '← convert_length: 5 km = 3.10685596119 mi',
        '5 km is about 3.11 miles.',
        '',
      ].join('\n'),
    );

    expect(api.requests).toHaveLength(2);
    expect(api.requests[0]?.headers.authorization).toBe('Bearer test-key');
    const first = api.body(0);
    expect(first).toMatchObject({ model: 'claude-test', stream: true, max_tokens: 4096 });
    expect(first.messages).toEqual([{ role: 'user', content: 'How far is 5 km in miles?' }]);
    expect(first.tools?.map((tool) => tool.name)).toEqual(['convert_length', 'convert_temperature']);
    expect(api.body(1).messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_a',
          content: [{ type: 'text', text: '5 km = 3.10685596119 mi' }],
        },
      ],
    });
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('shows a failing tool compactly and sends the model an error result', async () => {
    api.script(
      reply([toolUse('convert_temperature', { value: -5, from: 'K', to: 'C' }, 'toolu_b')]),
      reply([text('That temperature is impossible.')]),
    );
    const result = await chat(['-t', converter, '-m', 'claude-test', 'What is -5 K in Celsius?']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        '→ convert_temperature {"value":-5,"from":"K","to":"C"}',
        '← convert_temperature failed: TOOL_THREW: -5 °K is below absolute zero',
        'That temperature is impossible.',
        '',
      ].join('\n'),
    );
    expect(api.body(1).messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_b',
          content: [{ type: 'text', text: '-5 °K is below absolute zero' }],
          is_error: true,
        },
      ],
    });
  });

  it('--json prints the conversation and each call’s outcome, without streaming', async () => {
    api.script(
      reply([toolUse('convert_length', { value: 1, from: 'mi', to: 'km' }, 'toolu_c')]),
      reply([text('1.609344 km.')]),
    );
    const result = await chat(['--json', '--tools', converter, 'One mile in km?'], {
      ANTHROPIC_MODEL: 'claude-env',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const document = JSON.parse(result.stdout);
    expect(document.ok).toBe(true);
    expect(document.response.content).toEqual([{ type: 'text', text: '1.609344 km.', citations: null }]);
    expect(document.messages).toHaveLength(4);
    expect(document.toolCalls).toEqual([
      {
        id: 'toolu_c',
        name: 'convert_length',
        input: { value: 1, from: 'mi', to: 'km' },
        outcome: { content: [{ type: 'text', text: '1 mi = 1.609344 km' }], isError: false },
      },
    ]);
    expect(api.body(0).model).toBe('claude-env');
    expect(api.body(0).stream).toBeUndefined();
  });

  it('an API error ends the chat with exit 1 and one plain line on stderr, the API’s message once', async () => {
    api.script(apiError(401, 'authentication_error', { message: 'invalid x-api-key' }));
    const result = await chat(['--tools', converter, '--model', 'claude-test', 'hello']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('toolhost: authentication failed (401): invalid x-api-key\n');
  });

  it('an API error type without words of its own is named, still once', async () => {
    api.script(apiError(418, 'teapot_error', { message: 'short and stout' }));
    const result = await chat(['--model', 'claude-test', 'hello']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('toolhost: the Messages API answered teapot_error (418): short and stout\n');
  });

  it('shows a multi-line tool error as lines, not joined into one', async () => {
    api.script(
      reply([toolUse('convert_length', { value: '5', from: 'km' }, 'toolu_d')]),
      reply([text('I sent bad input.')]),
    );
    const result = await chat(['-t', converter, '-m', 'claude-test', 'How far is 5 km?']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        '→ convert_length {"value":"5","from":"km"}',
        "← convert_length failed: INVALID_INPUT: the input does not match the tool's parameterSchema:",
        "    - the input must have required property 'to'",
        '    - /value must be number',
        'I sent bad input.',
        '',
      ].join('\n'),
    );
  });

  it('works without tools', async () => {
    api.script(reply([text('Hello!')]));
    const result = await chat(['--model', 'claude-test', 'Say', 'hello']);
    expect(result).toMatchObject({ code: 0, stdout: 'Hello!\n', stderr: '' });
    expect(api.body(0).messages).toEqual([{ role: 'user', content: 'Say hello' }]);
    expect(api.body(0).tools).toBeUndefined();
  });

  it('Ctrl-C stops a chat waiting for the API (exit 130)', async () => {
    api.script(hang());
    const child = startCli(['chat', '--tools', converter, '--model', 'claude-test', 'hello'], {
      tmpDir: tmp.path,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.baseURL },
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    await api.waitForRequests(1);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    expect(stderr).toBe('toolhost: interrupted; the conversation was stopped\n');
    expect(readdirSync(tmp.path)).toEqual([]);
  });
});
