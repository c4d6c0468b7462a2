/**
 * `toolhost serve` beside a tool that closes the descriptors it did not open: the hosting process
 * holds its channel to the relay, its pools' pipes and its event loop among them. The attack is
 * refused, the server stays up, and a good package's later `tools/call` answers.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir } from './support/cli-run.js';
import { exited, GOOD, RecordingStdioTransport } from './support/mcp-serve.js';

const DESCRIPTORS = fileURLToPath(new URL('../fixtures/strict/descriptors', import.meta.url));

describe.each(['strict', 'worker'] as const)('toolhost serve --isolation %s', (tier) => {
  const tmp = freshDir(`toolhost-mcp-descriptors-${tier}`);
  let transport: RecordingStdioTransport;
  let client: Client;

  const call = (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  beforeAll(async () => {
    transport = new RecordingStdioTransport(['--isolation', tier, GOOD, DESCRIPTORS], tmp.path);
    client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await exited(transport.child);
    tmp.remove();
  });

  it('survives a tool that closes descriptors 3 to 255, and a good package answers its next tools/call', async () => {
    const attack = await call('fd_close_all');
    expect(attack.isError).toBe(true);
    expect(attack._meta?.['toolhost/errorCode']).toBe('TOOL_THREW');
    expect(attack.content).toEqual([
      {
        type: 'text',
        text: "TOOL_THREW: EBADF: bad file descriptor, close (descriptor 3 was not opened by this tool; toolhost refuses the host's descriptors)",
      },
    ]);
    expect(await call('fd_close_all', { careful: true })).toMatchObject({
      content: [{ type: 'text', text: 'closed 0' }],
      isError: false,
    });

    expect(await call('say', { text: 'after the attack' })).toEqual({
      content: [{ type: 'text', text: 'you said: after the attack' }],
      isError: false,
    });
    expect(transport.child.exitCode).toBeNull();
    for (const line of transport.stdoutLines()) {
      expect(JSONRPCMessageSchema.safeParse(JSON.parse(line)).success, line).toBe(true);
    }
  });
});
