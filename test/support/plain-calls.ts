/**
 * The plain-call path's tests (test/mcp-plain-calls*.test.ts): a scripted host, a client by hand
 * that keeps every line the server sent, and every shape of outcome a host may give.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { ToolServer } from '../../dist/src/mcp/tool-server.js';

export type Outcome = Record<string, unknown>;
export type Script = (args: Record<string, unknown>, signal: AbortSignal) => Promise<Outcome>;

export const text = (value: string) => ({ type: 'text' as const, text: value });
export const INFO = { name: 'scripted', description: 'd', inputSchema: { type: 'object' } };

/** A host whose one tool answers what the test scripts; `started` resolves when a call began. */
export class ScriptedHost {
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
export class WireClient {
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
export function connected(): { transport: Transport; client: WireClient } {
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

export async function initialized(client: WireClient): Promise<void> {
  await client.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'test', version: '1.0.0' },
  });
  client.toServer({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

/** One turn of the event loop: every answer already settled has been written by then. */
export const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Every shape of outcome the host may give, well-formed or not. */
export const outcomes: Array<[string, () => Promise<Outcome>]> = [
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

/** toolhost's MCP server over `host`, as serve makes it for stdio (list changes on, logs per connection). */
export function stdioToolServer(host: ScriptedHost): ToolServer {
  return new ToolServer(host as never, {
    name: 'toolhost',
    version: '0.0.0',
    listChanged: true,
    legacyLogScope: 'connection',
  });
}
