/**
 * `toolhost serve servers.json`, a sandboxing gateway whose stdout is a client's protocol channel,
 * serving hostile MCP servers beside an honest one to the official client: garbage on their stdout,
 * writes into serve's own stdout through /proc (a named pipe, the kind of stdout that can be opened
 * again), forged and malformed replies and a stderr flood. Every line on serve's stdout is a JSON-RPC
 * message, none of it theirs, and the honest server keeps answering.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir } from './support/cli-run.js';
import { childPids, exited, RecordingStdioTransport } from './support/mcp-serve.js';
import {
  FLOOD_MARKER,
  fixtureEntry,
  GARBAGE_MARKER,
  writeServersConfig,
} from './support/mcp-server-fixtures.js';

describe('toolhost serve of a config of hostile MCP servers, over stdio', () => {
  const tmp = freshDir('toolhost-servers-serve');
  let transport: RecordingStdioTransport;
  let client: Client;
  const clientErrors: Error[] = [];

  const call = (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;
  const errorCode = (result: CallToolResult) =>
    (result._meta as Record<string, unknown> | undefined)?.['toolhost/errorCode'];
  const expectHonest = async (text: string) => {
    expect(await call('echo', { text })).toEqual({
      content: [{ type: 'text', text: `echo: ${text}` }],
      isError: false,
    });
  };

  beforeAll(async () => {
    const config = await writeServersConfig(tmp.path, {
      honest: fixtureEntry('honest'),
      garbage: fixtureEntry('stdout-garbage'),
      forged: fixtureEntry('forged-replies', { toolhost: { timeoutMs: 5000 } }),
      flood: fixtureEntry('stderr-flood'),
    });
    transport = new RecordingStdioTransport([config], tmp.path, { stdout: 'fifo' });
    client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
    client.onerror = (error) => clientErrors.push(error);
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await exited(transport.child);
    tmp.remove();
  });

  it('lists the servers’ tools', async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['echo', 'count', 'write_garbage', 'reply_twice', 'flood_stderr']),
    );
  });

  it('garbage a server writes on its own stdout never reaches serve’s', async () => {
    expect(textOf(await call('write_garbage'))).toBe('answered after garbage');
    await expectHonest('after garbage');
  });

  it('a server cannot open serve’s stdout through /proc, nor its hosting process’s', async () => {
    const relay = transport.child.pid as number;
    for (const hostPid of [relay, ...childPids(relay)]) {
      const result = await call('write_host_stdout', { hostPid });
      expect(textOf(result)).toMatch(/^host: denied: ENOENT\ntty: denied: E[A-Z]+$/);
    }
    await expectHonest('after /proc');
  });

  it('forged and malformed replies reach the client as one answer each, the malformed as TOOL_BAD_RESULT', async () => {
    expect(textOf(await call('reply_to_unknown_ids'))).toBe('answered after forged replies');
    expect(textOf(await call('reply_twice'))).toBe('first reply');
    const malformed = await call('reply_wrong_shape', { shape: 'no-jsonrpc-field' });
    expect(malformed.isError).toBe(true);
    expect(errorCode(malformed)).toBe('TOOL_BAD_RESULT');
    await expectHonest('after forged replies');
  });

  it('a stderr flood reaches neither serve’s stdout nor, beyond a bound, its stderr', async () => {
    expect(textOf(await call('flood_stderr', { megabytes: 8 }))).toBe('flooded 8 MB');
    await expectHonest('after the flood');
    expect(transport.stderr.text.split(FLOOD_MARKER).length - 1).toBeLessThan(1000);
  });

  it('every line on serve’s stdout was a JSON-RPC message, none of it a server’s own writing', () => {
    const lines = transport.stdoutLines();
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) {
      expect(JSONRPCMessageSchema.safeParse(JSON.parse(line)).success, line).toBe(true);
      expect(line).not.toContain(GARBAGE_MARKER);
      expect(line).not.toContain(FLOOD_MARKER);
      // As answers (the tools' descriptions name them).
      expect(line).not.toContain('"text":"FORGED"');
      expect(line).not.toContain('"text":"second reply"');
    }
    expect(clientErrors).toEqual([]);
  });
});
