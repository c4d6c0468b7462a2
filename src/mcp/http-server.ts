/**
 * MCP over Streamable HTTP, stateless: every POST to `/mcp` gets a new MCP server and transport (the
 * SDK's stateless mode), so no request depends on one before it and several instances can stand
 * behind one load balancer. Before anything is parsed, each request is checked as the spec's
 * security guidance asks: an `Origin` header must be one the operator allowed (a browser page on
 * another site, or a DNS-rebinding page, is refused with 403), the `Host` must be a loopback name
 * when the server listens on loopback, and with a token, `Authorization: Bearer <token>` (401).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** The one path the HTTP server answers on. */
export const MCP_PATH = '/mcp';

export interface HttpServeOptions {
  /** The address to listen on. @default '127.0.0.1' (the spec: bind only to localhost when local) */
  host: string;
  /** 0 for a free port. */
  port: number;
  /** Every request must carry `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Values of `Origin` that may call; a request without `Origin` (not a browser) is not refused for it. */
  allowedOrigins: readonly string[];
  /** A new MCP server for one request. */
  createServer(): Server;
}

export interface HttpEndpoint {
  /** `http://127.0.0.1:43121/mcp`. */
  url: string;
  /** Stops taking connections; requests under way go on. */
  stopAccepting(): void;
  /** Resolves once every request under way has been answered, then drops idle connections. */
  close(): Promise<void>;
}

/** Listens; rejects with the system's error (`EADDRINUSE`, `EACCES`, …) if it can't. */
export function listenHttp(options: HttpServeOptions): Promise<HttpEndpoint> {
  const loopback = isLoopback(options.host);
  const token = options.token === undefined ? undefined : digest(options.token);
  let inFlight = 0;
  let settled: () => void = () => {};

  const server = createServer((request, response) => {
    inFlight += 1;
    response.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) settled();
    });
    const refusal = refuse(request, { loopback, token, allowedOrigins: options.allowedOrigins });
    if (refusal !== undefined) {
      reply(response, refusal.status, refusal.message, refusal.headers);
      return;
    }
    if (request.method !== 'POST') {
      // Stateless: no stream for the server to speak on unasked (GET), no session to end (DELETE).
      reply(response, 405, 'Method not allowed: this server is stateless and takes POST only', {
        Allow: 'POST',
      });
      return;
    }
    handle(request, response, options.createServer).catch(() => {
      if (!response.headersSent) reply(response, 500, 'Internal server error');
      else response.destroy();
    });
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${host}:${address.port}${MCP_PATH}`,
        stopAccepting: () => server.close(),
        close: async () => {
          server.close();
          if (inFlight > 0) await new Promise<void>((done) => (settled = done));
          server.closeAllConnections();
        },
      });
    });
  });
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  create: () => Server,
): Promise<void> {
  const body = await readJson(request);
  if (!body.ok) {
    reply(response, body.status, body.message, {}, body.code);
    return;
  }
  const server = create();
  // No sessionIdGenerator: the SDK's stateless mode (no session id issued or checked). A request
  // that asked for progress gets an SSE stream to carry it; any other gets its answer as plain JSON,
  // which costs less than a stream (the spec lets the server choose).
  const transport = new StreamableHTTPServerTransport(
    asksForProgress(body.value) ? {} : { enableJsonResponse: true },
  );
  // When the client goes away before its answer (or after it), the server closes, which aborts a
  // call still running: over stateless HTTP that is how a client cancels, since its
  // `notifications/cancelled` comes in another request, maybe to another instance.
  response.once('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, body.value);
}

/** The most a request body may hold: the SDK transport's own default. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

type ReadBody = { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

/**
 * The request's JSON, read here rather than by the transport so the transport can be chosen by
 * what the request asks; the same bound and the same answers as the SDK's own reading.
 */
async function readJson(request: IncomingMessage): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      return {
        ok: false,
        status: 413,
        code: -32000,
        message: `Payload too large: at most ${MAX_BODY_BYTES} bytes`,
      };
    }
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, status: 400, code: -32700, message: 'Parse error: Invalid JSON' };
  }
}

/** Whether any request in the body (one message or a batch) carries a progress token. */
function asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}

interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

function refuse(
  request: IncomingMessage,
  checks: { loopback: boolean; token: Buffer | undefined; allowedOrigins: readonly string[] },
): Refusal | undefined {
  const path = (request.url ?? '').split('?')[0];
  if (path !== MCP_PATH) return { status: 404, message: `Not found: the MCP endpoint is ${MCP_PATH}` };
  const origin = request.headers.origin;
  if (origin !== undefined && !checks.allowedOrigins.includes(origin)) {
    return { status: 403, message: `Forbidden: origin ${origin} is not allowed` };
  }
  if (checks.loopback && !isLoopbackName(hostName(request.headers.host))) {
    return {
      status: 403,
      message: 'Forbidden: this server listens on loopback and takes loopback host names only',
    };
  }
  if (checks.token !== undefined) {
    const match = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '');
    if (match?.[1] === undefined || !timingSafeEqual(digest(match[1]), checks.token)) {
      return { status: 401, message: 'Unauthorized', headers: { 'WWW-Authenticate': 'Bearer' } };
    }
  }
  return undefined;
}

function reply(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
) {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Hashing first gives equal lengths, which timingSafeEqual needs. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function hostName(header: string | undefined): string {
  if (header === undefined) return '';
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return '';
  }
}

function isLoopback(host: string): boolean {
  return host === '::1' || isLoopbackName(host);
}

/** A host name as a URL gives it (IPv6 in brackets). */
function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
}
