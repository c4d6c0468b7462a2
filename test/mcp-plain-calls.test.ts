/**
 * The plain-call path (src/mcp/plain-calls.ts) on 2025-era connections: a `tools/call` with a name
 * and arguments and nothing else is answered beside the SDK's per-request layers, and gets the same
 * bytes the SDK's path gives. Each case is put to both paths of one MCP server: as a plain call,
 * and with a progress token (which only the SDK's path takes). The host is a scripted one, so that
 * every shape of outcome, well-formed or not, can be put; the real host's calls over stdio and HTTP
 * are in the other mcp-* files, which run this path for every plain call they make. 2026-07-28 and
 * HTTP's era check: mcp-plain-calls-modern.test.ts.
 */
import type { Transport } from '@modelcontextprotocol/server';
import { Server } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlainCalls } from '../dist/src/mcp/plain-calls.js';
import {
  connected,
  initialized,
  outcomes,
  ScriptedHost,
  stdioToolServer,
  text,
  turn,
  type WireClient,
} from './support/plain-calls.js';

describe('a plain tools/call answers with the bytes the SDK would send', () => {
  const host = new ScriptedHost();
  const tools = stdioToolServer(host);
  let client: WireClient;
  let transport: Transport;

  beforeAll(async () => {
    ({ client, transport } = connected());
    await tools.createServer({ era: 'legacy' }).connect(transport);
    await initialized(client);
  });
  afterAll(() => tools.close());

  /** The answer to the same call as a plain call and as one with a progress token (the SDK's path). */
  async function bothWays(args: unknown): Promise<[string, string]> {
    const plain = await client.request('tools/call', { name: 'scripted', arguments: args });
    const sdk = await client.request('tools/call', {
      name: 'scripted',
      arguments: args,
      _meta: { progressToken: 'p' },
    });
    return [plain, sdk];
  }

  it.each(outcomes)('%s', async (_name, outcome) => {
    host.script = outcome;
    const [plain, sdk] = await bothWays({ text: 'hi' });
    expect(plain).toBe(sdk);
  });

  it.each([
    ['no arguments', undefined],
    ['null arguments', null],
    ['an array of arguments', [1]],
    ['arguments with an own __proto__ key', JSON.parse('{"__proto__":{"p":1}}')],
  ])('%s: the same answer either way', async (_name, args) => {
    host.script = async (received) => ({ content: [text(JSON.stringify(received))], isError: false });
    const [plain, sdk] =
      args === undefined
        ? await Promise.all([
            client.request('tools/call', { name: 'scripted' }),
            client.request('tools/call', { name: 'scripted', _meta: { progressToken: 'p' } }),
          ])
        : await bothWays(args);
    expect(plain).toBe(sdk);
  });

  it('an unknown tool and a name that is not a string get the SDK path and its errors', async () => {
    for (const name of ['nope', 7, '__proto__']) {
      const plain = await client.request('tools/call', { name, arguments: {} });
      const sdk = await client.request('tools/call', { name, arguments: {}, _meta: { progressToken: 1 } });
      expect(plain).toBe(sdk);
      expect(JSON.parse(plain).error.code).toBe(-32602);
    }
  });

  it('a cancelled plain call is aborted and never answered; the next call is', async () => {
    host.script = (_args, signal) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => resolve({ content: [text('late')], isError: false }), {
          once: true,
        });
      });
    const started = host.started();
    const id = client.send('tools/call', { name: 'scripted', arguments: {} });
    await started;
    client.toServer({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'no' },
    });
    await turn();
    expect(host.signals.at(-1)?.aborted).toBe(true);
    host.script = async () => ({ content: [text('next')], isError: false });
    expect(
      JSON.parse(await client.request('tools/call', { name: 'scripted', arguments: {} })).result,
    ).toEqual({
      content: [text('next')],
      isError: false,
    });
    expect(client.lines.some((line) => JSON.parse(line).id === id)).toBe(false);
  });

  it('once the client asked for log messages, calls take the SDK path (their lines are sent before the answer)', async () => {
    await client.request('logging/setLevel', { level: 'debug' });
    host.script = async () => ({ content: [text('logged')], isError: false });
    const [plain, sdk] = await bothWays({});
    expect(plain).toBe(sdk);
  });
});

describe('which calls the plain path takes', () => {
  let taken: string[];
  let sdkAnswered: string[];
  let client: WireClient;
  let transport: Transport;
  let running: AbortSignal | undefined;

  beforeAll(async () => {
    taken = [];
    sdkAnswered = [];
    const server = new Server({ name: 's', version: '1' }, { capabilities: { tools: {} } });
    const plain = new PlainCalls({
      takes: (name: string) => name !== 'refused',
      call: async (name: string, _args: Record<string, unknown>, signal: AbortSignal) => {
        taken.push(name);
        if (name !== 'hang') return { content: [text(name)] };
        running = signal;
        return new Promise(() => {});
      },
    });
    plain.install(server, 'legacy');
    server.setRequestHandler('tools/call', (request, ctx) => {
      const settled = plain.takeSettled(ctx.mcpReq.id);
      if (settled !== undefined) throw new Error('nothing was handed back here');
      sdkAnswered.push(request.params.name);
      return { content: [text(`sdk ${request.params.name}`)] };
    });
    ({ client, transport } = connected());
    await server.connect(transport);
    await initialized(client);
  });

  it('takes a call with a name and arguments only, of a tool it offers', async () => {
    await client.request('tools/call', { name: 'plain', arguments: { a: 1 } });
    await client.request('tools/call', { name: 'bare' });
    expect(taken).toEqual(['plain', 'bare']);
    expect(sdkAnswered).toEqual([]);
  });

  it('leaves to the SDK a call with _meta, any other param, or a tool it does not take', async () => {
    await client.request('tools/call', { name: 'meta', arguments: {}, _meta: {} });
    await client.request('tools/call', { name: 'other', arguments: {}, extra: 1 });
    await client.request('tools/call', { name: 'refused', arguments: {} });
    expect(sdkAnswered).toEqual(['meta', 'other', 'refused']);
    expect(taken).toEqual(['plain', 'bare']);
  });

  it('aborts a running plain call when the connection closes, and answers nothing', async () => {
    const before = client.lines.length;
    client.send('tools/call', { name: 'hang', arguments: {} });
    await turn();
    expect(running?.aborted).toBe(false);
    await transport.close();
    expect(running?.aborted).toBe(true);
    await turn();
    expect(client.lines.length).toBe(before);
  });
});
