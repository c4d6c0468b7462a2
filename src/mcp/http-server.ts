/**
 * MCP over Streamable HTTP, stateless, for both protocol eras: the SDK's `createMcpHandler` serves
 * a 2026-07-28 request per request (it carries its protocol version and client capabilities in
 * `_meta`), and a 2025-era one through its stateless legacy fallback; every POST to `/mcp` gets a
 * new MCP server, so no request depends on one before it and several instances can stand behind one
 * load balancer. Before anything is parsed, each request passes the checks in http-checks.ts
 * (origin, host, token).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, type McpServerFactory } from '@modelcontextprotocol/server';
import {
  type CheckSettings,
  corsHeaders,
  digest,
  isLoopback,
  isPreflight,
  MCP_PATH,
  preflightHeaders,
  refuse,
} from './http-checks.js';
import { asksForProgress, isLegacyBody, isPlainLegacyRequest, legacyHandler } from './legacy-http.js';
import type { PlainCallsOptions } from './plain-calls.js';
import { PlainModernHttp } from './plain-http.js';
import { SharedLegacyServer } from './shared-legacy.js';
import { answerWith, type WebHandler } from './web-bridge.js';

export { MCP_PATH } from './http-checks.js';

export interface HttpServeOptions {
  /** The address to listen on. @default '127.0.0.1' (the spec: bind only to localhost when local) */
  host: string;
  /** 0 for a free port. */
  port: number;
  /** Every request must carry `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Values of `Origin` that may call; a request without `Origin` (not a browser) is not refused for it. */
  allowedOrigins: readonly string[];
  /** A new MCP server for one request, of the era the request speaks. */
  createServer: McpServerFactory;
  /**
   * Lets the endpoint hear of changes to the offered tools, which it passes to the 2026-07-28
   * clients listening (`subscriptions/listen`); returns how to stop.
   */
  onToolsChanged?: (notify: () => void) => () => void;
  /** Whether a 2025-era client asked for log messages (its `logging/setLevel` holds for the endpoint). */
  legacyLogsWanted?: () => boolean;
  /** Runs the plain 2026-07-28 `tools/call`s answered beside the SDK's entry (plain-http.ts); without it, the entry answers all. */
  plainCalls?: PlainCallsOptions;
}

export interface HttpEndpoint {
  /** `http://127.0.0.1:43121/mcp`. */
  url: string;
  /** Stops taking connections; requests under way go on. */
  stopAccepting(): void;
  /** Ends the listen streams, resolves once every other request has been answered, then drops idle connections. */
  close(): Promise<void>;
}

/** Listens; rejects with the system's error (`EADDRINUSE`, `EACCES`, …) if it can't. */
export function listenHttp(options: HttpServeOptions): Promise<HttpEndpoint> {
  const settings: CheckSettings = {
    loopback: isLoopback(options.host),
    port: options.port,
    token: options.token === undefined ? undefined : digest(options.token),
    allowedOrigins: options.allowedOrigins,
  };
  const { handler, ...answerers } = routeByEra(options);
  const { shared, plain } = answerers;
  const stopNotify = options.onToolsChanged?.(() => handler.notify.toolsChanged()) ?? (() => {});
  const requests = new RequestCount();
  const server = createServer(requestListener(settings, answerers, requests));

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      settings.port = address.port;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${host}:${address.port}${MCP_PATH}`,
        stopAccepting: () => server.close(),
        close: () => closeEndpoint({ server, handler, shared, plain, stopNotify, requests }),
      });
    });
  });
}

type McpHandler = ReturnType<typeof createMcpHandler>;

/**
 * 2026-07-28 requests go to the SDK's entry; 2025-era ones (no `_meta` claim) to legacy-http.ts, or
 * to shared-legacy.ts when nothing is to be sent before their answer.
 */
function routeByEra(options: HttpServeOptions): Answerers & { handler: McpHandler } {
  const plain =
    options.plainCalls === undefined
      ? undefined
      : new PlainModernHttp(options.plainCalls, (request, init) => handler.fetch(request, init));
  const handler = createMcpHandler(plain?.watching(options.createServer) ?? options.createServer, {
    legacy: 'reject',
    maxRequestBodySize: MAX_BODY_BYTES,
    onerror: () => {},
  });
  const streams = (body: unknown) => asksForProgress(body) || (options.legacyLogsWanted?.() ?? false);
  const legacy = legacyHandler(options.createServer, streams);
  const shared = new SharedLegacyServer(options.createServer, streams);
  return { handler, modern: handler.fetch, legacy, shared, plain };
}

/** Where a request that passed the checks is answered, by its era (told once, in `handle`). */
interface Answerers {
  modern: WebHandler;
  legacy: WebHandler;
  shared: SharedLegacyServer;
  plain: PlainModernHttp | undefined;
}

/**
 * Requests being answered, and how many of them are `subscriptions/listen` streams (open until the
 * server ends them, so a shutdown waits for the others, then ends these).
 */
class RequestCount {
  inFlight = 0;
  readonly listening = { count: 0 };
  #settled: () => void = () => {};

  /** Tells a shutdown waiting for the requests beside the streams that they are answered. */
  readonly check = (): void => {
    if (this.inFlight - this.listening.count <= 0) this.#settled();
  };

  /** Counts a request until its response closes. */
  opened(response: ServerResponse): void {
    this.inFlight += 1;
    response.once('close', () => {
      this.inFlight -= 1;
      this.check();
    });
  }

  /** Resolves once every request but the listen streams has been answered. */
  othersAnswered(): Promise<void> {
    return new Promise<void>((done) => (this.#settled = done));
  }

  /** Resolves once no request is left, at once if none is. */
  allAnswered(): Promise<void> {
    return new Promise<void>((done) => {
      this.#settled = () => this.inFlight === 0 && done();
      this.#settled();
    });
  }
}

/** Each request: counted, checked (origin, host, token), preflight answered, then POST only. */
function requestListener(
  settings: CheckSettings,
  answerers: Answerers,
  requests: RequestCount,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    requests.opened(response);
    const refusal = refuse(request, settings);
    if (refusal !== undefined) {
      reply(response, refusal.status, refusal.message, {
        ...corsHeaders(request, settings),
        ...refusal.headers,
      });
      return;
    }
    if (isPreflight(request)) {
      response.writeHead(204, preflightHeaders(request, settings));
      response.end();
      return;
    }
    const cors = corsHeaders(request, settings);
    if (request.method !== 'POST') {
      // Stateless: no stream for the server to speak on unasked (GET), no session to end (DELETE).
      reply(response, 405, 'Method not allowed: this server is stateless and takes POST only', {
        ...cors,
        Allow: 'POST',
      });
      return;
    }
    handle(request, response, answerers, cors, requests.listening, requests.check).catch(() => {
      if (!response.headersSent) reply(response, 500, 'Internal server error', cors);
      else response.destroy();
    });
  };
}

/** The endpoint's shutdown: no new connections, the others answered, the listen streams ended, idle connections dropped. */
async function closeEndpoint(endpoint: {
  server: Server;
  handler: McpHandler;
  shared: SharedLegacyServer;
  plain: PlainModernHttp | undefined;
  stopNotify: () => void;
  requests: RequestCount;
}): Promise<void> {
  const { server, handler, shared, plain, stopNotify, requests } = endpoint;
  server.close();
  stopNotify();
  if (requests.inFlight - requests.listening.count > 0) await requests.othersAnswered();
  // The listen streams: the entry ends each with its last answer.
  plain?.close();
  await Promise.all([handler.close(), shared.close()]);
  if (requests.inFlight > 0) await requests.allAnswered();
  server.closeAllConnections();
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  answerers: Answerers,
  cors: Record<string, string>,
  listening: { count: number },
  changed: () => void,
): Promise<void> {
  const body = await readJson(request);
  if (!body.ok) {
    reply(response, body.status, body.message, cors, body.code);
    return;
  }
  if ((body.value as { method?: unknown } | null)?.method === 'subscriptions/listen') {
    listening.count += 1;
    response.once('close', () => {
      listening.count -= 1;
      changed();
    });
  }
  // The plain 2026-07-28 path classifies as the SDK does (once: a request it takes is not asked again).
  const plain = answerers.plain !== undefined && !isPlainLegacyRequest(request, body.value);
  if (plain && (await answerers.plain?.answerIfPlain(request, response, body.value, cors))) return;
  if (!(await isLegacyBody(request, body.value))) {
    await answerWith(answerers.modern, request, response, body.value, cors);
  } else if (!(await answerers.shared.answerIfPlain(request, response, body.value, cors))) {
    await answerWith(answerers.legacy, request, response, body.value, cors);
  }
}

/** The most a request body may hold: the SDK's own default. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

type ReadBody = { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

/**
 * The request's JSON, read here under a bound (the SDK's own) so that a body too large or not JSON
 * costs no MCP server; the same answers as the SDK's own reading.
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
  const raw = Buffer.concat(chunks);
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')) };
  } catch {
    return { ok: false, status: 400, code: -32700, message: 'Parse error: Invalid JSON' };
  }
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
