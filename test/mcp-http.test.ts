/**
 * `toolhost serve --http`: stateless Streamable HTTP with the SDK's client. Two instances answer
 * one client's calls alternately (a round-robin fetch stands in for the load balancer); requests
 * with a foreign Origin, a foreign Host or without the token are refused before anything runs.
 */
import { existsSync, readdirSync, watch } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir } from './support/cli-run.js';
import { connectHttp, exited, GOOD, type HttpServe, startHttp } from './support/mcp-serve.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A raw POST of one JSON-RPC message, as a browser or a proxy would send it. */
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

describe('two toolhost serve --http instances behind a round-robin balancer', () => {
  const tmp = freshDir('toolhost-mcp-http');
  let instances: HttpServe[] = [];

  beforeAll(async () => {
    instances = await Promise.all([startHttp([GOOD], tmp.path), startHttp([GOOD], tmp.path)]);
  });
  afterAll(async () => {
    for (const { child } of instances) child.kill('SIGTERM');
    await Promise.all(instances.map(({ child }) => exited(child)));
    tmp.remove();
  });

  it('answers one client whose requests land on either instance, alternately', async () => {
    const [first, second] = instances as [HttpServe, HttpServe];
    const landed: string[] = [];
    let next = 0;
    // Every request (initialize included) goes to the next instance in turn.
    const roundRobin: typeof fetch = (_input, init) => {
      const target = [first.url, second.url][next++ % 2] as string;
      landed.push(target);
      return fetch(target, init);
    };
    const client = await connectHttp(first.url, { fetch: roundRobin });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('whoami');

    const pids = new Set<number>();
    const answers: number[] = [];
    for (let call = 0; call < 6; call += 1) {
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      const pid = (result.structuredContent as { pid: number }).pid;
      answers.push(pid);
      pids.add(pid);
    }
    expect(pids).toEqual(new Set([first.child.pid, second.child.pid]));
    // Each call is one POST, so consecutive calls alternate between the instances.
    for (let call = 1; call < answers.length; call += 1) expect(answers[call]).not.toBe(answers[call - 1]);
    expect(new Set(landed)).toEqual(new Set([first.url, second.url]));
    await client.close();
  });

  it("answers a call's progress on its own response stream, before the answer", async () => {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'count_up', arguments: {}, _meta: { progressToken: 'p7' } },
    };
    const response = await post((instances[0] as HttpServe).url, {}, call);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)));
    expect(events.map((event) => event.params?.progress ?? event.result?.content)).toEqual([
      1,
      2,
      3,
      4,
      [{ type: 'text', text: 'counted' }],
    ]);
    expect(events[0]).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'p7' } });
  });

  it('answers a call that asked for no progress as plain JSON, without a stream', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'say', arguments: { text: 'json' } },
    };
    const response = await post((instances[0] as HttpServe).url, {}, call);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: 8,
      result: { content: [{ type: 'text', text: 'you said: json' }], isError: false },
    });
  });

  it('answers a body that is not JSON with the JSON-RPC parse error (400, -32700)', async () => {
    const response = await fetch((instances[0] as HttpServe).url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc": "2.0", "id": 1,',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error: Invalid JSON' },
      id: null,
    });
  });

  it('refuses a request whose Origin was not allowed, with 403, before running anything', async () => {
    const response = await post((instances[0] as HttpServe).url, { origin: 'http://evil.example' });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Forbidden: origin http://evil.example is not allowed' },
      id: null,
    });
  });

  it('refuses a Host that is not a loopback name (DNS rebinding), with 403', async () => {
    // fetch won't send a Host of its own choosing; node:http will.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = httpRequest(
        (instances[0] as HttpServe).url,
        { method: 'POST', headers: { host: 'rebound.example', 'content-type': 'application/json' } },
        (response) => {
          response.resume();
          resolve(response.statusCode);
        },
      );
      request.once('error', reject);
      request.end(JSON.stringify(INITIALIZE));
    });
    expect(status).toBe(403);
  });

  it('takes no GET stream and no DELETE: it is stateless (405)', async () => {
    const url = (instances[0] as HttpServe).url;
    const get = await fetch(url, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(405);
  });

  it('answers 404 off the /mcp path', async () => {
    const url = new URL('/other', (instances[0] as HttpServe).url);
    expect((await post(url.href)).status).toBe(404);
  });
});

describe('cancelling a call over stateless HTTP', () => {
  const tmp = freshDir('toolhost-mcp-http-cancel');
  let serve: HttpServe;

  beforeAll(async () => {
    // One thread for the package: the next call runs only once the first one's worker is gone.
    serve = await startHttp(['--threads', '1', GOOD], tmp.path);
  });
  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    if (serve !== undefined) await exited(serve.child);
    tmp.remove();
  });

  it("closing the call's connection aborts it and terminates its worker, so the next call runs", async () => {
    const cancel = new AbortController();
    const stall = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'stall', arguments: {}, _meta: { progressToken: 'p1' } },
    };
    const response = await fetch(serve.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(stall),
      signal: cancel.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('notifications/progress')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    cancel.abort();
    // `stall` never yields and its timeout is ten minutes away: this answers only after its worker
    // was terminated.
    const client = await connectHttp(serve.url);
    const result = await client.callTool({ name: 'say', arguments: { text: 'after' } });
    expect(result.content).toEqual([{ type: 'text', text: 'you said: after' }]);
    await client.close();
  });

  // Without a progress token the call is answered as plain JSON by the endpoint's kept server.
  it("closing a plain call's connection aborts it too, and the next call runs", async () => {
    const cancel = new AbortController();
    // `stall` writes `working` in its call's folder once it runs: that is when to go away.
    const started = fileAppears(tmp.path, 'working');
    const answer = fetch(serve.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'stall', arguments: {} },
      }),
      signal: cancel.signal,
    });
    await started;
    cancel.abort();
    await expect(answer).rejects.toThrow();
    const client = await connectHttp(serve.url);
    const result = await client.callTool({ name: 'say', arguments: { text: 'after a plain call' } });
    expect(result.content).toEqual([{ type: 'text', text: 'you said: after a plain call' }]);
    await client.close();
  });
});

/** Resolves once a file named `name` that was not there before appears anywhere under `folder`. */
function fileAppears(folder: string, name: string): Promise<void> {
  const before = new Set(
    readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((path) => basename(path) === name),
  );
  return new Promise((resolve) => {
    const watcher = watch(folder, { recursive: true }, (_event, path) => {
      if (path === null || basename(path) !== name || before.has(path)) return;
      if (!existsSync(join(folder, path))) return;
      watcher.close();
      resolve();
    });
  });
}

describe('toolhost serve --http with --allow-origin, --token-env and --timeout', () => {
  const tmp = freshDir('toolhost-mcp-http-token');
  let serve: HttpServe;
  const token = 'a-token-nobody-guesses';

  beforeAll(async () => {
    serve = await startHttp(
      ['--token-env', 'MCP_TOKEN', '--allow-origin', 'https://app.example', '--timeout', '200', GOOD],
      tmp.path,
      { MCP_TOKEN: token },
    );
  });
  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    if (serve !== undefined) await exited(serve.child);
    tmp.remove();
  });

  it('refuses a request without the token, or with another, with 401 and WWW-Authenticate', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: token }]) {
      const response = await post(serve.url, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('answers the SDK client that sends the token', async () => {
    const client = await connectHttp(serve.url, { headers: { authorization: `Bearer ${token}` } });
    const result = await client.callTool({ name: 'say', arguments: { text: 'with a token' } });
    expect(result.content).toEqual([{ type: 'text', text: 'you said: with a token' }]);
    await client.close();
  });

  it('caps every call with --timeout (the tool asks for ten minutes)', async () => {
    const client = await connectHttp(serve.url, { headers: { authorization: `Bearer ${token}` } });
    const result = await client.callTool({ name: 'stall', arguments: {} });
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'TOOL_TIMEOUT: tool timed out after 200 ms' }],
    });
    await client.close();
  });

  it('answers an allowed Origin with the token, and refuses another', async () => {
    const authorized = { authorization: `Bearer ${token}` };
    expect((await post(serve.url, { ...authorized, origin: 'https://app.example' })).status).toBe(200);
    expect((await post(serve.url, { ...authorized, origin: 'https://other.example' })).status).toBe(403);
  });
});
