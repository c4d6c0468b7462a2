/**
 * The plain-call path (src/mcp/plain-calls.ts): a 2025-era `tools/call` with a name and arguments
 * and nothing else is answered beside the SDK's per-request layers, and gets the same bytes the
 * SDK's path gives. Each case is put to both paths of one MCP server: as a plain call, and with a
 * progress token (which only the SDK's path takes). The host is a scripted one, so that every shape
 * of outcome, well-formed or not, can be put; the real host's calls over stdio and HTTP are in
 * the other mcp-* files, which run this path for every plain call they make.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  isLegacyRequest,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  Server,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLegacyBody } from '../dist/src/mcp/legacy-http.js';
import { PlainCalls } from '../dist/src/mcp/plain-calls.js';
import { ToolServer } from '../dist/src/mcp/tool-server.js';

type Outcome = Record<string, unknown>;
type Script = (args: Record<string, unknown>, signal: AbortSignal) => Promise<Outcome>;

const text = (value: string) => ({ type: 'text' as const, text: value });
const INFO = { name: 'scripted', description: 'd', inputSchema: { type: 'object' } };

/** A host whose one tool answers what the test scripts; `started` resolves when a call began. */
class ScriptedHost {
  script: Script = async () => ({ content: [text('hello')], isError: false });
  readonly signals: AbortSignal[] = [];
  #started: Array<() => void> = [];
  list() {
    return [INFO];
  }
  on() {}
  off() {}
  call(_name: string, args: Record<string, unknown>, options: { signal: AbortSignal }) {
    this.signals.push(options.signal);
    for (const resolve of this.#started.splice(0)) resolve();
    return this.script(args, options.signal);
  }
  started(): Promise<void> {
    return new Promise((resolve) => this.#started.push(resolve));
  }
}

/** The client's end, by hand: every message the server sent, as the JSON text a wire would carry. */
class WireClient {
  readonly lines: string[] = [];
  #waiting = new Map<unknown, (line: string) => void>();
  #nextId = 1;
  constructor(readonly toServer: (message: JSONRPCMessage) => void) {}

  heard(message: JSONRPCMessage): void {
    const line = JSON.stringify(message);
    this.lines.push(line);
    const id = (message as { id?: unknown }).id;
    const waiter = this.#waiting.get(id);
    if (waiter === undefined) return;
    this.#waiting.delete(id);
    waiter(line);
  }

  /** Sends a request; resolves with the answer's JSON text, its id taken out. */
  request(method: string, params: Record<string, unknown>): Promise<string> {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#waiting.set(id, (line) => resolve(JSON.stringify({ ...JSON.parse(line), id: '-' })));
      this.toServer({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Sends a request and gives its id back, for a call the test cancels. */
  send(method: string, params: Record<string, unknown>): number {
    const id = this.#nextId++;
    this.toServer({ jsonrpc: '2.0', id, method, params });
    return id;
  }
}

/** A server-side transport whose client is a {@link WireClient}; each message cloned through JSON. */
function connected(): { transport: Transport; client: WireClient } {
  const transport: Transport = {
    async start() {},
    async send(message) {
      const copy = JSON.parse(JSON.stringify(message)) as JSONRPCMessage;
      queueMicrotask(() => client.heard(copy));
    },
    async close() {
      transport.onclose?.();
    },
  };
  const client = new WireClient((message) => {
    const copy = JSON.parse(JSON.stringify(message)) as JSONRPCMessage;
    queueMicrotask(() => transport.onmessage?.(copy));
  });
  return { transport, client };
}

async function initialized(client: WireClient): Promise<void> {
  await client.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'test', version: '1.0.0' },
  });
  client.toServer({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

/** One turn of the event loop: every answer already settled has been written by then. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Every shape of outcome the host may give, well-formed or not. */
const outcomes: Array<[string, () => Promise<Outcome>]> = [
  ['text', async () => ({ content: [text('hello')], isError: false })],
  ['no content', async () => ({ content: [], isError: false })],
  [
    'an error outcome, its code in the text and in _meta',
    async () => ({
      content: [text('tool timed out after 50 ms')],
      isError: true,
      error: { code: 'TOOL_TIMEOUT', message: 'tool timed out after 50 ms' },
    }),
  ],
  [
    'details and a full-output path in _meta',
    async () => ({
      content: [text('cut')],
      isError: false,
      details: { rows: [1, 2], nested: { deep: true } },
      fullOutputPath: '/tmp/out.txt',
    }),
  ],
  [
    'a JSON object text, given as structuredContent too',
    async () => ({ content: [text('{"a":1,"b":[2]}')], isError: false }),
  ],
  [
    'structuredContent of its own',
    async () => ({ content: [text('x')], isError: false, structuredContent: { a: { b: null } } }),
  ],
  [
    'structuredContent with an own __proto__ key (the SDK copies it: handed to the SDK)',
    async () => ({
      content: [text('x')],
      isError: false,
      structuredContent: JSON.parse('{"__proto__":{"polluted":1},"b":2}'),
    }),
  ],
  [
    'details with an own __proto__ key',
    async () => ({ content: [text('x')], isError: false, details: JSON.parse('{"__proto__":{"p":1}}') }),
  ],
  [
    'an image beside text (handed to the SDK)',
    async () => ({
      content: [
        text('look'),
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
      isError: false,
    }),
  ],
  [
    'an image whose data is not base64 (the SDK refuses it)',
    async () => ({
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'not base64!' } }],
      isError: false,
    }),
  ],
  [
    'a resource block',
    async () => ({
      content: [{ type: 'resource', resource: { uri: 'file:///a.txt', text: 'a', mimeType: 'text/plain' } }],
      isError: false,
    }),
  ],
  [
    'a host call that throws (a JSON-RPC error)',
    async () => {
      throw Object.assign(new Error('the host broke'), { code: -32001, data: { why: 'test' } });
    },
  ],
  [
    'a host call that throws something without a code',
    async () => {
      throw new Error('no code');
    },
  ],
];

describe('a plain tools/call answers with the bytes the SDK would send', () => {
  const host = new ScriptedHost();
  const tools = new ToolServer(host as never, {
    name: 'toolhost',
    version: '0.0.0',
    listChanged: true,
    legacyLogScope: 'connection',
  });
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

describe('a plain 2026-07-28 tools/call answers with the bytes the SDK would send', () => {
  const host = new ScriptedHost();
  const tools = new ToolServer(host as never, {
    name: 'toolhost',
    version: '0.0.0',
    listChanged: true,
    legacyLogScope: 'connection',
  });
  const envelope = {
    [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
    [CLIENT_INFO_META_KEY]: { name: 'test', version: '1.0.0' },
    [CLIENT_CAPABILITIES_META_KEY]: {},
  };
  let client: WireClient;
  let connection: { close(): Promise<void> };

  beforeAll(async () => {
    const linked = connected();
    client = linked.client;
    connection = serveStdio((context) => tools.createServer(context), {
      transport: linked.transport,
      onerror: () => {},
    });
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
