/**
 * `toolhost serve` over stdio, with the official MCP client from the SDK, as a desktop client would
 * run it: what tools/list offers, what each kind of call answers, progress and cancellation.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir } from './support/cli-run.js';
import { exited, GOOD, RecordingStdioTransport, type StdioServe, startStdio } from './support/mcp-serve.js';

describe('toolhost serve over stdio', () => {
  const tmp = freshDir('toolhost-mcp-stdio');
  let serve: StdioServe;

  beforeAll(async () => {
    // One thread per package: a call can only run once the one before it has left the worker.
    serve = await startStdio(['--threads', '1', GOOD], tmp.path);
  });
  afterAll(async () => {
    await serve?.client.close();
    tmp.remove();
  });

  it('offers every tool of the package with its schema, timeout and concurrency', async () => {
    const { tools } = await serve.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'count_up',
      'picture',
      'refuse',
      'say',
      'stall',
      'stats',
      'whoami',
    ]);
    const say = tools.find((tool) => tool.name === 'say');
    expect(say).toEqual({
      name: 'say',
      description: 'Says the text back',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
        additionalProperties: false,
      },
      _meta: { 'toolhost/timeoutMs': 20_000, 'toolhost/concurrency': 'exclusive' },
    });
    expect(tools.find((tool) => tool.name === 'stats')?._meta).toEqual({
      'toolhost/timeoutMs': 30_000,
      'toolhost/concurrency': 'parallel',
    });
  });

  it('answers a text result as text content', async () => {
    const result = await serve.client.callTool({ name: 'say', arguments: { text: 'hello' } });
    expect(result).toEqual({ content: [{ type: 'text', text: 'you said: hello' }], isError: false });
  });

  it('answers text and image blocks as MCP content, with details in _meta', async () => {
    const result = await serve.client.callTool({ name: 'picture', arguments: {} });
    expect(result).toEqual({
      content: [
        { type: 'text', text: 'a tiny picture' },
        {
          type: 'image',
          data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
          mimeType: 'image/png',
        },
      ],
      isError: false,
      _meta: { 'toolhost/details': { pixels: 1 } },
    });
  });

  it('answers a JSON object both as text and as structuredContent', async () => {
    const result = await serve.client.callTool({ name: 'stats', arguments: { text: 'two words' } });
    expect(result).toEqual({
      content: [{ type: 'text', text: '{"words":2,"characters":9}' }],
      structuredContent: { words: 2, characters: 9 },
      isError: false,
    });
  });

  it('answers an error result with isError and its code leading the text', async () => {
    const result = await serve.client.callTool({ name: 'refuse', arguments: {} });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'TOOL_ERROR_RESULT: no such city: Atlantis' }],
      isError: true,
      _meta: { 'toolhost/errorCode': 'TOOL_ERROR_RESULT' },
    });
  });

  it('answers input that fails the schema as a tool error the model can read, and runs nothing', async () => {
    const result = await serve.client.callTool({ name: 'say', arguments: { text: 5 } });
    expect(result.isError).toBe(true);
    expect(result._meta).toEqual({ 'toolhost/errorCode': 'INVALID_INPUT' });
    expect(result.content).toEqual([
      {
        type: 'text',
        text: "INVALID_INPUT: the input does not match the tool's parameterSchema:\n- /text must be string",
      },
    ]);
  });

  it('answers an unknown tool with the protocol error the spec names (-32602), listing the tools', async () => {
    const failure = await serve.client.callTool({ name: 'nope', arguments: {} }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: -32602 });
    expect(String((failure as Error).message)).toContain(
      'UNKNOWN_TOOL: unknown tool "nope"; available tools: say, picture, stats, refuse, count_up, stall, whoami',
    );
  });

  it("a client's cancellation aborts the call and terminates its worker, so the next call runs", async () => {
    const cancel = new AbortController();
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const call = serve.client.callTool({ name: 'stall', arguments: {} }, CallToolResultSchema, {
      signal: cancel.signal,
      onprogress: () => started(),
    });
    const settled = call.then(
      () => 'answered',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    await running;
    cancel.abort();
    expect(await settled).toMatch(/abort/i);
    // The package has one worker thread, and `stall` never yields: `say` can only run once that
    // worker was terminated (its own timeout is ten minutes away).
    const next = await serve.client.callTool({ name: 'say', arguments: { text: 'after' } });
    expect(next.content).toEqual([{ type: 'text', text: 'you said: after' }]);
  });

  it('never showed the client a line it could not parse', () => {
    expect(serve.clientErrors).toEqual([]);
  });
});

describe('progress over stdio', () => {
  const tmp = freshDir('toolhost-mcp-progress');
  let transport: RecordingStdioTransport;
  let client: Client;

  beforeAll(async () => {
    transport = new RecordingStdioTransport([GOOD], tmp.path);
    client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await exited(transport.child);
    tmp.remove();
  });

  it("turns ctx.emit into notifications/progress for the client's token, increasing, before the answer", async () => {
    const result = await client.callTool({ name: 'count_up', arguments: {} }, CallToolResultSchema, {
      onprogress: () => {},
    });
    expect(result.content).toEqual([{ type: 'text', text: 'counted' }]);
    // Read on the wire: the SDK's client drops progress that arrives in the same read as the answer
    // (its notification handlers run a microtask after the response handler).
    const wire = transport.messages.flatMap((message): unknown[] => {
      if ('method' in message && message.method === 'notifications/progress') return [message.params];
      if ('result' in message && JSON.stringify(message.result).includes('counted')) return ['the answer'];
      return [];
    });
    const token = (wire[0] as { progressToken?: unknown } | undefined)?.progressToken;
    expect(token).toBeDefined();
    expect(wire).toEqual([
      { progressToken: token, progress: 1, total: 4, message: 'step 1' },
      { progressToken: token, progress: 2, total: 4, message: 'step 2' },
      { progressToken: token, progress: 3, total: 4, message: 'step 3' },
      { progressToken: token, progress: 4, message: '{"note":"almost there"}' },
      'the answer',
    ]);
  });

  it('sends no progress for a call whose client sent no progress token', async () => {
    const before = transport.messages.length;
    const result = await client.callTool({ name: 'count_up', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'counted' }]);
    const after = transport.messages.slice(before);
    expect(after.filter((message) => 'method' in message)).toEqual([]);
  });
});
