/**
 * `toolhost serve --http` at its edges: a loopback-bound server takes its own loopback origin and
 * still refuses a rebinding page; `--allow-origin` gets real CORS (an answered preflight, the
 * allow and expose headers, on refusals too); binding beyond loopback without a token says so once;
 * a 2026-07-28 request for a removed method is a 404 with -32601, one whose `Mcp-Method` header
 * disagrees with its body a 400 with -32020.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freshDir, REPO, withTier } from './support/cli-run.js';
import { exited, GOOD, type HttpServe, StderrLog, serveEnv, startHttp } from './support/mcp-serve.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function post(url: string, headers: Record<string, string> = {}, body: unknown = INITIALIZE) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function stop(serve: HttpServe | undefined): Promise<void> {
  if (serve === undefined) return;
  serve.child.kill('SIGTERM');
  await exited(serve.child);
}

describe('a loopback-bound server and the Origin header', () => {
  const tmp = freshDir('toolhost-mcp-origin');
  let serve: HttpServe;
  let port: string;

  beforeAll(async () => {
    serve = await startHttp([GOOD], tmp.path);
    port = new URL(serve.url).port;
  });
  afterAll(async () => {
    await stop(serve);
    tmp.remove();
  });

  it('takes its own loopback origin, by address or by name', async () => {
    expect((await post(serve.url, { origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await post(serve.url, { origin: `http://localhost:${port}` })).status).toBe(200);
  });

  it('refuses a loopback origin of another port, and a rebinding page, with 403', async () => {
    expect((await post(serve.url, { origin: 'http://127.0.0.1:1' })).status).toBe(403);
    const rebinding = await post(serve.url, { origin: `http://evil.example:${port}` });
    expect(rebinding.status).toBe(403);
    // And the next request is served as before.
    expect((await post(serve.url)).status).toBe(200);
  });

  it('sends a JSON answer whole, its length known, not as a chunked stream', async () => {
    const answer = await post(serve.url);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('transfer-encoding')).toBeNull();
    const text = await answer.text();
    expect(Number(answer.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { protocolVersion: '2025-11-25' },
    });
  });

  // 2025-era requests that need no stream share one kept server (src/mcp/shared-legacy.ts).
  it('answers two clients that send the same request id at once, each with its own answer and id', async () => {
    const call = (text: string) =>
      post(
        serve.url,
        { 'mcp-protocol-version': '2025-11-25' },
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'stats', arguments: { text } },
        },
      ).then((answer) => answer.json());
    const [one, two] = await Promise.all([call('one'), call('two words')]);
    expect(one).toMatchObject({ id: 7, result: { structuredContent: { words: 1, characters: 3 } } });
    expect(two).toMatchObject({ id: 7, result: { structuredContent: { words: 2, characters: 9 } } });
  });

  it('gives a request the kept server does not take the per-request answer, errors included', async () => {
    const notJsonRpc = await post(serve.url, {}, { jsonrpc: '1.0', id: 3, method: 'tools/list' });
    expect(notJsonRpc.status).toBe(400);
    expect(await notJsonRpc.json()).toMatchObject({ error: { code: -32600 } });
    const jsonOnly = await post(
      serve.url,
      { accept: 'application/json' },
      { jsonrpc: '2.0', id: 4, method: 'ping' },
    );
    expect(jsonOnly.status).toBe(406);
    const unknownVersion = await post(
      serve.url,
      { 'mcp-protocol-version': '1999-01-01' },
      { jsonrpc: '2.0', id: 5, method: 'ping' },
    );
    expect(unknownVersion.status).toBe(400);
    // A batch: answered by a server of its own, both answers in one body.
    const batch = await post(serve.url, {}, [
      { jsonrpc: '2.0', id: 8, method: 'ping' },
      { jsonrpc: '2.0', id: 9, method: 'tools/list' },
    ]);
    expect(batch.status).toBe(200);
    // And the kept server serves on: an unknown method is its JSON-RPC error, then a call answers.
    const unknownMethod = await post(serve.url, {}, { jsonrpc: '2.0', id: 'u', method: 'no/such' });
    expect(await unknownMethod.json()).toMatchObject({ id: 'u', error: { code: -32601 } });
    const ping = await post(serve.url, {}, { jsonrpc: '2.0', id: 6, method: 'ping' });
    expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 6, result: {} });
  });
});

describe('--allow-origin: CORS for the origins named', () => {
  const tmp = freshDir('toolhost-mcp-cors');
  const origin = 'https://app.example';
  let serve: HttpServe;

  beforeAll(async () => {
    serve = await startHttp(['--allow-origin', origin, '--token-env', 'MCP_TOKEN', GOOD], tmp.path, {
      MCP_TOKEN: 'sesame',
    });
  });
  afterAll(async () => {
    await stop(serve);
    tmp.remove();
  });

  it('answers the preflight (no credentials on it) with the methods and headers it may send', async () => {
    const response = await fetch(serve.url, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-param-city',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    expect(response.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b/);
    const allowed = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const name of [
      'authorization',
      'content-type',
      'mcp-protocol-version',
      'mcp-method',
      'mcp-param-city',
    ]) {
      expect(allowed).toContain(name);
    }
  });

  it('marks its answers, and its 401, readable by the page, with the headers exposed', async () => {
    const answered = await post(serve.url, { origin, authorization: 'Bearer sesame' });
    expect(answered.status).toBe(200);
    expect(answered.headers.get('access-control-allow-origin')).toBe(origin);
    expect(answered.headers.get('access-control-expose-headers')).toMatch(/Mcp-Protocol-Version/);
    const refused = await post(serve.url, { origin });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(origin);
  });

  it('gives an origin it was not told of neither a preflight nor CORS headers', async () => {
    const response = await fetch(serve.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://other.example', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('a 2026-07-28 request the server must refuse', () => {
  const tmp = freshDir('toolhost-mcp-modern-http');
  let serve: HttpServe;

  beforeAll(async () => {
    serve = await startHttp([GOOD], tmp.path);
  });
  afterAll(async () => {
    await stop(serve);
    tmp.remove();
  });

  const modern = (method: string, headers: Record<string, string> = {}, params: object = {}) =>
    post(
      serve.url,
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...headers },
      { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: MODERN_META } },
    );

  it.each(['ping', 'logging/setLevel', 'initialize'])(
    'answers %s, removed in 2026-07-28, with 404 and -32601',
    async (method) => {
      const response = await modern(method, {}, method === 'logging/setLevel' ? { level: 'info' } : {});
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ id: 7, error: { code: -32601 } });
    },
  );

  it('answers an Mcp-Method header that disagrees with the body with 400 and -32020, then serves the next', async () => {
    const response = await modern('tools/list', { 'mcp-method': 'prompts/list' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32020 } });
    const listed = await modern('tools/list');
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({
      result: { ttlMs: 0, cacheScope: 'private', resultType: 'complete' },
    });
  });

  it('answers an Mcp-Name header that disagrees with the tool called with 400 and -32020', async () => {
    const response = await modern(
      'tools/call',
      { 'mcp-name': 'stats' },
      { name: 'say', arguments: { text: 'x' } },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32020 } });
  });
});

describe('binding beyond loopback', () => {
  const tmp = freshDir('toolhost-mcp-bind');

  afterAll(() => tmp.remove());

  /** serve on every address; resolves with its stderr once it listens, then stops it. */
  async function stderrOf(extra: string[], env: Record<string, string> = {}): Promise<string> {
    const child = spawn(
      process.execPath,
      [CLI, ...withTier(['serve', '--http', '0.0.0.0:0', ...extra, GOOD])],
      {
        cwd: REPO,
        env: serveEnv(tmp.path, env),
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const stderr = new StderrLog(child.stderr as Readable);
    await stderr.waitFor(/over MCP at /);
    child.kill('SIGTERM');
    await exited(child);
    return stderr.text;
  }

  it('says once, without --token-env, that anyone who reaches it can call every tool', async () => {
    const text = await stderrOf([]);
    expect(
      text.match(/warning: listening on 0\.0\.0\.0:0, beyond loopback, without --token-env/g),
    ).toHaveLength(1);
  });

  it('says nothing of it with a token', async () => {
    const text = await stderrOf(['--token-env', 'MCP_TOKEN'], { MCP_TOKEN: 'sesame' });
    expect(text).toMatch(/over MCP at /);
    expect(text).not.toMatch(/warning/);
  });
});
