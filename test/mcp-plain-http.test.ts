/**
 * The plain-call path over Streamable HTTP on 2026-07-28 (src/mcp/plain-http.ts): the same POST to
 * an endpoint with the path and to one without it (the SDK's entry answers everything) gets the same
 * status, content type and bytes, for every shape of outcome and for the requests the entry refuses;
 * a plain call costs no MCP server; a client that goes away aborts its call, and the next is fine.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpEndpoint, listenHttp } from '../dist/src/mcp/http-server.js';
import { ToolServer } from '../dist/src/mcp/tool-server.js';
import { outcomes, ScriptedHost, text } from './support/plain-calls.js';

const ENVELOPE = {
  [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
  [CLIENT_INFO_META_KEY]: { name: 'test', version: '1.0.0' },
  [CLIENT_CAPABILITIES_META_KEY]: {},
};

interface Answer {
  status: number;
  type: string | null;
  body: string;
}

describe('a 2026-07-28 tools/call over HTTP answers the same with the plain path and without it', () => {
  const host = new ScriptedHost();
  const tools = new ToolServer(host as never, {
    name: 'toolhost',
    version: '0.0.0',
    listChanged: false,
    legacyLogScope: 'endpoint',
  });
  const made = { plain: 0, sdk: 0 };
  let plain: HttpEndpoint;
  let sdk: HttpEndpoint;
  let nextId = 1;

  const endpoint = (which: 'plain' | 'sdk') =>
    listenHttp({
      host: '127.0.0.1',
      port: 0,
      allowedOrigins: [],
      createServer: (context) => {
        made[which] += 1;
        return tools.createServer(context);
      },
      ...(which === 'plain' ? { plainCalls: tools.plainCalls() } : {}),
    });

  /** A `tools/call` of `params` as a 2026-07-28 client sends it, `headers` over its own. */
  const callRequest = (params: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) => ({
    method: 'POST',
    ...(signal === undefined ? {} : { signal }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'scripted',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params }),
  });

  async function post(url: string, params: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(url, callRequest(params, headers));
    const body = (await response.text()).replace(/"id":\d+/, '"id":"-"');
    return { status: response.status, type: response.headers.get('content-type'), body };
  }

  /** A 2026-07-28 `tools/list`; resolves with its status. */
  const listTools = async (url: string) =>
    (
      await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/list',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: ENVELOPE } }),
      })
    ).status;
  const bothWays = async (params: unknown, headers: Record<string, string> = {}) =>
    [await post(plain.url, params, headers), await post(sdk.url, params, headers)] as const;
  const call = (args: unknown = { text: 'hi' }, meta: unknown = ENVELOPE) => ({
    name: 'scripted',
    arguments: args,
    _meta: meta,
  });

  beforeAll(async () => {
    [plain, sdk] = await Promise.all([endpoint('plain'), endpoint('sdk')]);
    // A client's first request (here a tools/list) goes through the entry, which binds a server to
    // the revision: the plain path encodes with that server's codec.
    for (const url of [plain.url, sdk.url]) expect(await listTools(url)).toBe(200);
  });
  afterAll(async () => {
    await Promise.all([plain.close(), sdk.close()]);
    tools.close();
  });

  it.each(outcomes)('%s', async (_name, outcome) => {
    host.script = outcome;
    const [viaPlain, viaSdk] = await bothWays(call());
    expect(viaPlain).toEqual(viaSdk);
  });

  it('takes a plain call without making an MCP server, and stamps it as the SDK does (an SDK upgrade that drops the internals it reads fails here)', async () => {
    host.script = async () => ({ content: [text('hello')], isError: false });
    const before = made.plain;
    const answer = await post(plain.url, call());
    expect(made.plain).toBe(before);
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('application/json');
    const { result } = JSON.parse(answer.body);
    expect(result.content).toEqual([text('hello')]);
    expect(result.resultType).toBe('complete');
  });

  it('hands a call it ran but cannot answer to the SDK, which does not run it again', async () => {
    let runs = 0;
    host.script = async () => {
      runs += 1;
      throw new Error('no code');
    };
    const answer = await post(plain.url, call());
    expect(runs).toBe(1);
    expect(JSON.parse(answer.body).error.message).toBe('no code');
  });

  const refused: Array<[string, unknown, Record<string, string>]> = [
    ['an Mcp-Name header naming another tool', call(), { 'mcp-name': 'other' }],
    ['an Mcp-Name header in the Base64 form', call(), { 'mcp-name': '=?base64?c2NyaXB0ZWQ=?=' }],
    ['an empty Mcp-Method header', call(), { 'mcp-method': '' }],
    ['a header naming another revision than the envelope', call(), { 'mcp-protocol-version': '2026-01-01' }],
    [
      'an envelope whose client info is not an object',
      call({}, { ...ENVELOPE, [CLIENT_INFO_META_KEY]: 7 }),
      {},
    ],
    [
      'a revision the SDK does not serve',
      call({}, { ...ENVELOPE, [PROTOCOL_VERSION_META_KEY]: '2099-01-01' }),
      { 'mcp-protocol-version': '2099-01-01' },
    ],
    ['an unknown tool', { ...call(), name: 'nope' }, { 'mcp-name': 'nope' }],
    ['arguments that are not an object', call([1, 2]), {}],
    [
      'a log level in the envelope (the SDK streams the call)',
      call({}, { ...ENVELOPE, [LOG_LEVEL_META_KEY]: 'debug' }),
      {},
    ],
    ['a progress token (the SDK streams the call)', call({}, { ...ENVELOPE, progressToken: 'p' }), {}],
    ['a text media type', call(), { 'content-type': 'text/plain' }],
  ];
  it.each(refused)('%s: the SDK answers', async (_name, params, headers) => {
    host.script = async () => ({ content: [text('hello')], isError: false });
    const [viaPlain, viaSdk] = await bothWays(params, headers);
    expect(viaPlain).toEqual(viaSdk);
  });

  it('aborts a call whose client went away, and answers the next', async () => {
    host.script = (_args, signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => resolve({ content: [text('late')], isError: false }), {
          once: true,
        }),
      );
    const gone = new AbortController();
    const started = host.started();
    const request = fetch(plain.url, callRequest(call(), {}, gone.signal));
    await started;
    const signal = host.signals.at(-1);
    const aborted = new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
    gone.abort();
    await expect(request).rejects.toThrow();
    await aborted;
    expect(signal?.aborted).toBe(true);
    host.script = async () => ({ content: [text('next')], isError: false });
    const next = await post(plain.url, call());
    expect(JSON.parse(next.body).result.content).toEqual([text('next')]);
  });

  it('a shutdown waits for a plain call under way, whose HOST_CLOSED answer the entry still sends', async () => {
    const closing = await endpoint('plain');
    expect(await listTools(closing.url)).toBe(200);
    let finish: () => void = () => {};
    host.script = () =>
      new Promise((resolve) => {
        finish = () =>
          resolve({
            content: [text('HOST_CLOSED: the tool host is closed')],
            isError: true,
            error: { code: 'HOST_CLOSED', message: 'the tool host is closed' },
          });
      });
    const started = host.started();
    const answer = post(closing.url, call());
    await started;
    // Answered after the shutdown began: the entry the answer is handed to must still be open.
    const shutdown = closing.close();
    finish();
    const { status, body } = await answer;
    expect(status).toBe(200);
    expect(JSON.parse(body).result).toMatchObject({
      isError: true,
      content: [text('HOST_CLOSED: the tool host is closed')],
    });
    await shutdown;
  });
});
