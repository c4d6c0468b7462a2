/**
 * Minimal MCP clients for the serve-parts scenario: JSON-RPC by hand, one line (or one POST) per
 * message, no SDK, so that what they measure is the server's side and not a client's layers.
 */
import { spawn } from 'node:child_process';

/** Calls one request at a time over newline-delimited JSON on `writable` / `readable`. */
class LineRpc {
  #write;
  #waiting = new Map();
  #rest = '';
  #nextId = 1;

  constructor(write, readable, { signedLines = false } = {}) {
    this.#write = write;
    readable.setEncoding('utf8');
    readable.on('data', (chunk) => {
      const lines = (this.#rest + chunk).split('\n');
      this.#rest = lines.pop();
      for (const line of lines) {
        // The hosting process signs each line (64 hex characters and a space before the JSON).
        const message = JSON.parse(signedLines ? line.slice(65) : line);
        const waiter = message.id === undefined ? undefined : this.#waiting.get(message.id);
        if (waiter === undefined) continue;
        this.#waiting.delete(message.id);
        waiter(message);
      }
    });
  }

  request(method, params) {
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.#write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  /**
   * 2026-07-28 by hand: every request carries its envelope in `_meta`, as the 2.x client's do (the
   * same three keys), and the connection needs no `initialize`.
   */
  modern() {
    const request = this.request.bind(this);
    return { request: (method, params) => request(method, { ...params, _meta: MODERN_ENVELOPE }) };
  }

  notify(method, params) {
    this.#write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }
}

const INITIALIZE = {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'bench-raw', version: '1.0.0' },
};

const MODERN_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench-raw', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

async function initialized(rpc) {
  const answer = await rpc.request('initialize', INITIALIZE);
  if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error));
  rpc.notify('notifications/initialized');
  return rpc;
}

/**
 * `toolhost serve <tools>` over stdio, spoken to by hand: on 2025-11-25 (`initialize` first), or
 * with `modern` on 2026-07-28 (an envelope on every request; the first one pins the era).
 * `nodeArgs` go to serve's node (`--cpu-prof`, say).
 */
export async function rawStdio({ cli, tools, env, nodeArgs = [], modern = false }) {
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve', tools], {
    env,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const lines = new LineRpc((line) => child.stdin.write(line), child.stdout);
  const rpc = modern ? lines.modern() : await initialized(lines);
  if (modern) await rpc.request('tools/list', {});
  return { rpc, close: () => child.stdin.end() };
}

/**
 * The hosting process alone (serve-child.js), without the relay: the bench takes the relay's place
 * on fd 3, sends the greeting (with `settings`, the parsed command line), and reads the signed lines without checking their signatures.
 */
export async function rawHosting({ entry, settings, env, nodeArgs = [] }) {
  const child = spawn(process.execPath, [...nodeArgs, entry], {
    env,
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
  });
  const channel = child.stdio[3];
  channel.write(`${JSON.stringify({ key: '0'.repeat(64), settings })}\n`);
  const rpc = await initialized(new LineRpc((line) => channel.write(line), channel, { signedLines: true }));
  return { rpc, close: () => child.kill('SIGTERM') };
}

/**
 * The floor under any relay: `depth` node processes in a chain, each passing every byte on to the
 * next and back, the last echoing; a line sent comes back through all of them. Only the processes'
 * wake-ups and copies, no parsing, no checks.
 */
export function echoChain(depth, env) {
  const script = (level) =>
    level === 1
      ? 'process.stdin.pipe(process.stdout)'
      : `const c = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(script(level - 1))}], { stdio: ['pipe', 'pipe', 'inherit'] }); process.stdin.pipe(c.stdin); c.stdout.pipe(process.stdout); process.stdin.on('end', () => c.stdin.end());`;
  const child = spawn(process.execPath, ['-e', script(depth)], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdout.setEncoding('utf8');
  // Lines come back in the order they were sent, so each resolves the oldest still waiting.
  const waiting = [];
  child.stdout.on('data', (chunk) => {
    for (let index = chunk.indexOf('\n'); index !== -1; index = chunk.indexOf('\n', index + 1))
      waiting.shift()?.();
  });
  return {
    roundTrip: () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
      }),
    close: () => child.stdin.end(),
  };
}

/**
 * A bare `node:http` server in a process of its own that answers every POST with the same small
 * JSON-RPC answer (no MCP, no checks): the floor under any HTTP serving, one POST and its answer
 * through `fetch` and Node's HTTP server. Resolves with its URL and how to stop it.
 */
export function httpEcho(env) {
  const script = `const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hello' }] } });
require('node:http').createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    response.end(answer);
  });
}).listen(0, '127.0.0.1', function () { process.stdout.write('http://127.0.0.1:' + this.address().port + '/mcp\\n'); });`;
  const child = spawn(process.execPath, ['-e', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve({ rpc: rawHttp(text.trim()), close: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`the HTTP echo exited with ${code}`)));
  });
}

/** Starts `toolhost serve --http 127.0.0.1:0 <tools>` with `cli`; resolves with the process and its URL. */
export function startServeHttp({ cli, tools, env, nodeArgs = [] }) {
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve', '--http', '127.0.0.1:0', tools], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      text += chunk;
      const match = /over MCP at (http:\/\/\S+)/.exec(text);
      if (match) resolve({ child, url: match[1] });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${text}`)));
  });
}

/**
 * A stateless Streamable HTTP endpoint, one POST per call, by hand; with `modern` on 2026-07-28 (the
 * envelope in every request's `_meta`, and the standard headers a 2.x client sends with it).
 */
export function rawHttp(url, { modern = false } = {}) {
  let nextId = 1;
  return {
    async request(method, params) {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': modern ? '2026-07-28' : '2025-11-25',
      };
      if (modern) {
        headers['mcp-method'] = method;
        if (typeof params?.name === 'string') headers['mcp-name'] = params.name;
      }
      const sent = modern ? { ...params, _meta: MODERN_ENVELOPE } : params;
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: sent }),
      });
      const text = await response.text();
      // A JSON answer, or one SSE event whose data is the answer.
      const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1];
      return JSON.parse(json);
    },
  };
}

/**
 * A client by hand on the client side of {@link linkedTransports}: requests as plain objects, no
 * SDK; `initialize` first.
 */
export async function rawLinked(transport) {
  const waiting = new Map();
  let nextId = 1;
  transport.onmessage = (message) => {
    const waiter = waiting.get(message.id);
    if (waiter === undefined) return;
    waiting.delete(message.id);
    waiter(message);
  };
  const rpc = {
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        void transport.send({ jsonrpc: '2.0', id, method, params });
      });
    },
    notify(method, params) {
      void transport.send({ jsonrpc: '2.0', method, params });
    },
  };
  return initialized(rpc);
}

/** Two linked in-process transports, each message cloned through JSON as a wire would. */
export function linkedTransports() {
  const make = () => ({
    onmessage: undefined,
    onclose: undefined,
    onerror: undefined,
    async start() {},
    async close() {
      this.onclose?.();
    },
  });
  const client = make();
  const server = make();
  for (const [from, to] of [
    [client, server],
    [server, client],
  ]) {
    from.send = async (message) => {
      const copy = JSON.parse(JSON.stringify(message));
      queueMicrotask(() => to.onmessage?.(copy));
    };
  }
  return { client, server };
}
