/**
 * The plain-call path (src/mcp/plain-calls.ts) on 2026-07-28 connections over stdio (the SDK's
 * stdio entry, in process): a call whose `_meta` is its envelope and nothing else gets the bytes
 * the SDK's path gives (`resultType`, the server's identity), and a bad envelope the SDK's error.
 * And over HTTP, a 2025-era POST told without the SDK's classification is told as the SDK would.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  isLegacyRequest,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLegacyBody } from '../dist/src/mcp/legacy-http.js';
import {
  connected,
  outcomes,
  ScriptedHost,
  stdioToolServer,
  text,
  turn,
  type WireClient,
} from './support/plain-calls.js';

describe('a plain 2026-07-28 tools/call answers with the bytes the SDK would send', () => {
  const host = new ScriptedHost();
  const tools = stdioToolServer(host);
  const envelope = {
    [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
    [CLIENT_INFO_META_KEY]: { name: 'test', version: '1.0.0' },
    [CLIENT_CAPABILITIES_META_KEY]: {},
  };
  let client: WireClient;
  let connection: { close(): Promise<void> };
  const servers: object[] = [];

  beforeAll(async () => {
    const linked = connected();
    client = linked.client;
    connection = serveStdio(
      (context) => {
        const server = tools.createServer(context);
        servers.push(server);
        return server;
      },
      {
        transport: linked.transport,
        onerror: () => {},
      },
    );
    // The opening message pins the connection's era.
    await client.request('tools/list', { _meta: envelope });
  });
  afterAll(async () => {
    await connection.close();
    tools.close();
  });

  /** The answer to the same call with only its envelope and with a progress token too (the SDK's path). */
  async function bothWays(
    meta: Record<string, unknown>,
    args: unknown = { text: 'hi' },
  ): Promise<[string, string]> {
    const plain = await client.request('tools/call', { name: 'scripted', arguments: args, _meta: meta });
    const sdk = await client.request('tools/call', {
      name: 'scripted',
      arguments: args,
      _meta: { ...meta, progressToken: 'p' },
    });
    return [plain, sdk];
  }

  it.each(outcomes)('%s', async (_name, outcome) => {
    host.script = outcome;
    const [plain, sdk] = await bothWays(envelope);
    expect(plain).toBe(sdk);
  });

  it('finds the SDK internals the plain path needs (an SDK upgrade that drops them fails here, not silently slower)', () => {
    expect(servers.length).toBeGreaterThan(0);
    for (const server of servers) {
      const internals = server as {
        _negotiatedWireCodec?: () => { checkInboundEnvelope?: unknown; encodeResult?: unknown };
        _outboundServerInfo?: unknown;
      };
      expect(typeof internals._negotiatedWireCodec).toBe('function');
      expect(typeof internals._outboundServerInfo).toBe('function');
      const codec = internals._negotiatedWireCodec?.call(server);
      expect(typeof codec?.checkInboundEnvelope).toBe('function');
      expect(typeof codec?.encodeResult).toBe('function');
    }
  });

  it('stamps the result as the SDK does (resultType, the server identity)', async () => {
    host.script = async () => ({ content: [text('hello')], isError: false });
    const [plain] = await bothWays(envelope);
    expect(JSON.parse(plain).result).toEqual({
      content: [text('hello')],
      isError: false,
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolhost', version: '0.0.0' } },
    });
  });

  it.each([
    ['an envelope without capabilities', { [PROTOCOL_VERSION_META_KEY]: '2026-07-28' }],
    ['client info of the wrong type', { ...envelope, [CLIENT_INFO_META_KEY]: 'me' }],
    ['a protocol version that is not a string', { ...envelope, [PROTOCOL_VERSION_META_KEY]: 7 }],
    ['a log level (its lines are sent before the answer)', { ...envelope, [LOG_LEVEL_META_KEY]: 'debug' }],
    ['a key of its own beside the envelope', { ...envelope, mine: 1 }],
  ])('%s: the same answer either way', async (_name, meta) => {
    host.script = async () => ({ content: [text('x')], isError: false });
    const [plain, sdk] = await bothWays(meta);
    expect(plain).toBe(sdk);
  });

  it('a cancelled plain call is aborted and never answered', async () => {
    host.script = (_args, signal) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => resolve({ content: [text('late')], isError: false }), {
          once: true,
        });
      });
    const started = host.started();
    const id = client.send('tools/call', { name: 'scripted', arguments: {}, _meta: envelope });
    await started;
    client.toServer({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'no', _meta: envelope },
    });
    await turn();
    expect(host.signals.at(-1)?.aborted).toBe(true);
    host.script = async () => ({ content: [text('next')], isError: false });
    const [next] = await bothWays(envelope);
    expect(JSON.parse(next).result.content).toEqual([text('next')]);
    expect(client.lines.some((line) => JSON.parse(line).id === id)).toBe(false);
  });
});

describe("telling a 2025-era HTTP request as the SDK's entry does", () => {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } };
  const claim = { [PROTOCOL_VERSION_META_KEY]: '2026-07-28', [CLIENT_CAPABILITIES_META_KEY]: {} };
  const cases: Array<[string, Record<string, string>, unknown]> = [
    ['a plain call, no version header', {}, call],
    ['a plain call, a 2025 version header', { 'mcp-protocol-version': '2025-11-25' }, call],
    ['a 2025 version header with white space after it', { 'mcp-protocol-version': '2025-06-18 ' }, call],
    ['a modern version header', { 'mcp-protocol-version': '2026-07-28' }, call],
    ['a modern version header behind white space', { 'mcp-protocol-version': ' 2026-07-28' }, call],
    ['a version header that is no date', { 'mcp-protocol-version': 'latest' }, call],
    ['an old date', { 'mcp-protocol-version': '1999-01-01' }, call],
    ['a progress token', {}, { ...call, params: { ...call.params, _meta: { progressToken: 1 } } }],
    ['an envelope claim', {}, { ...call, params: { ...call.params, _meta: claim } }],
    ['an envelope claim in an array _meta', {}, { ...call, params: { ...call.params, _meta: [] } }],
    [
      'initialize',
      {},
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } },
    ],
    ['a notification', {}, { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['a batch', {}, [call]],
    ['a response', {}, { jsonrpc: '2.0', id: 1, result: {} }],
    ['not JSON-RPC', {}, { hello: 1 }],
    ['a request with a key too many', {}, { ...call, extra: 1 }],
  ];

  it.each(cases)('%s', async (_name, headers, body) => {
    const incoming = { method: 'POST', headers: { 'content-type': 'application/json', ...headers } };
    const web = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(await isLegacyBody(incoming as never, body)).toBe(await isLegacyRequest(web, body));
  });
});
