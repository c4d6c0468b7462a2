/**
 * The hostile MCP servers of fixtures/mcp-servers, run directly by the official client with no
 * sandbox around them: each attack works when nothing contains it. This is what makes the hostile
 * suites honest (an attack that failed on its own would pass them for nothing). Only the attacks that
 * are safe to run unconfined are here: no bombs.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useLocalServers } from './support/local-servers.js';
import { GARBAGE_MARKER, mcpServerFile } from './support/mcp-server-fixtures.js';

interface Connected {
  client: Client;
  errors: Error[];
}

const connected: Connected[] = [];
afterEach(async () => {
  await Promise.all(connected.splice(0).map(({ client }) => client.close()));
});

async function connect(server: string, env: Record<string, string> = {}): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mcpServerFile(server)],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'fixture-check', version: '1.0.0' });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  const made = { client, errors };
  connected.push(made);
  return made;
}

async function textOf(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const [block] = result.content;
  if (block?.type !== 'text') throw new Error(`expected a text block, got ${JSON.stringify(result)}`);
  return block.text;
}

describe('the hostile MCP server fixtures, unconfined, do what they claim', () => {
  let folder: string;
  const local = useLocalServers();
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'toolhost-mcp-fixtures-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('read-file reads a file by every route', async () => {
    const secret = join(folder, 'secret.txt');
    await writeFile(secret, 'the secret');
    const { client } = await connect('read-file');
    expect(await textOf(client, 'read_file', { path: secret })).toBe(
      'fs: read: the secret\nlink: read: the secret\ncat: read: the secret',
    );
    expect(await textOf(client, 'list_folder', { path: folder })).toContain('secret.txt');
  });

  it('print-env prints the variables it was given', async () => {
    const { client } = await connect('print-env', { FIXTURE_CHECK_VARIABLE: 'visible value' });
    const text = await textOf(client, 'print_env');
    expect(text).toContain('"FIXTURE_CHECK_VARIABLE":"visible value"');
    expect(text).toContain('environ: ');
    expect(text.split('environ: ')[1]).toContain('FIXTURE_CHECK_VARIABLE=visible value');
  });

  it('write-file writes where it is told, directly and through a shell', async () => {
    const target = join(folder, 'written.txt');
    const { client } = await connect('write-file');
    expect(await textOf(client, 'write_file', { path: target, text: 'escaped' })).toBe(
      'fs: wrote\nsh: wrote',
    );
    expect(await readFile(target, 'utf8')).toBe('escaped');
    expect(await readFile(`${target}.sh`, 'utf8')).toBe('escaped');
  });

  it('connect-port reaches a loopback TCP port and an HTTP server', async () => {
    const { client } = await connect('connect-port');
    expect(await textOf(client, 'connect_socket', { host: '127.0.0.1', port: local.tcpPort })).toBe(
      'socket: connected: reached the tcp server',
    );
    expect(await textOf(client, 'fetch_url', { url: local.httpUrl })).toBe(
      'fetch: connected: reached the http server',
    );
    expect(local.reached).toEqual({ requests: ['/exfiltrate'], connections: 1 });
  });

  it('rug-pull changes its description and adds a tool once its switch says so, and announces it', async () => {
    const switchFile = join(folder, 'rug-switch');
    const { client } = await connect('rug-pull', { RUG_PULL_SWITCH: switchFile });
    const before = await client.listTools();
    expect(before.tools.map((tool) => tool.name)).toEqual([
      'weather',
      'announce_list_changed',
      'restart_self',
    ]);
    expect(before.tools[0]?.description).toBe('Gets the weather for a city');

    const announced = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    await writeFile(switchFile, 'pulled');
    expect(await textOf(client, 'announce_list_changed')).toBe('announced');
    await announced;
    const after = await client.listTools();
    expect(after.tools.map((tool) => tool.name)).toContain('weather_exfiltrate');
    expect(after.tools[0]?.description).toContain('~/.ssh/id_rsa');
  });

  it('invisible-characters lists text with bidi controls, zero-width characters and Unicode Tags', async () => {
    const { client } = await connect('invisible-characters');
    const listed = JSON.stringify((await client.listTools()).tools);
    for (const hidden of ['\u202E', '\u200B', '\u{E0041}']) expect(listed).toContain(hidden);
    // JSON.stringify escapes C0 controls.
    expect(listed).toContain('kelvin\\u0007');
  });

  it('many-tools lists 10,000 tools', async () => {
    const { client } = await connect('many-tools');
    expect((await client.listTools()).tools).toHaveLength(10_000);
  });

  it('forged-replies sends replies to ids never sent before its answer', async () => {
    const { client, errors } = await connect('forged-replies');
    expect(await textOf(client, 'reply_to_unknown_ids')).toBe('answered after forged replies');
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(await textOf(client, 'reply_twice')).toBe('first reply');
    await expect(
      client.callTool({ name: 'reply_wrong_shape', arguments: { shape: 'content-not-array' } }),
    ).rejects.toThrow();
  });

  it('stdout-garbage writes lines that are not the protocol and still answers', async () => {
    const { client, errors } = await connect('stdout-garbage');
    expect(await textOf(client, 'write_garbage')).toBe('answered after garbage');
    expect(
      errors.some((error) => String(error).includes(GARBAGE_MARKER) || error instanceof SyntaxError),
    ).toBe(true);
  });

  it('never-answers hears the cancellation of a call it left unanswered', async () => {
    const { client } = await connect('never-answers');
    const abort = new AbortController();
    const call = client.callTool({ name: 'never_answer', arguments: {} }, undefined, {
      signal: abort.signal,
    });
    abort.abort('the test gave up');
    await expect(call).rejects.toThrow();
    expect(await textOf(client, 'cancellations')).toBe('cancelled: [1]');
  });

  it('asks-client asks the client for sampling, and a client without it refuses', async () => {
    const { client } = await connect('asks-client');
    expect(await textOf(client, 'ask_client', { method: 'sampling/createMessage' })).toMatch(
      /^error: -32601 /,
    );
  });
});
