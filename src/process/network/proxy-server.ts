/**
 * One package's egress proxy: an HTTP proxy on a Unix socket that only that package's sandbox can
 * reach. `CONNECT host:port` opens a tunnel (TLS goes through it end to end: the proxy never sees
 * the plain text), and an absolute-form request (`GET http://host/path`) is forwarded. Every request
 * is decided by the package's grant ({@link decide}); a refusal is answered `403` with the sentence
 * the tool error shows, never a bare reset. Bounded: open client connections per package, bytes per
 * connection, bytes per call ({@link CallBudget}: tunnels both ways and forwarded bodies), header
 * sizes, idle time; data is relayed with backpressure, so memory stays a few buffers per connection.
 * A connection asked for while no call of the package is in flight is refused.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { CallBudget } from './call-budget.js';
import { type Decision, decide, type PolicySettings, refusalMessage } from './policy.js';
import { Relay } from './relay.js';
import { hostPort } from './rules.js';

export interface ProxyLimits {
  /** Open client connections the package may hold; one more is answered 503. */
  maxConnections: number;
  /** Bytes a connection may carry, both ways together; then it is cut. */
  maxBytesPerConnection: number;
  /** Bytes the package may move while one call is in flight, both ways together (see CallBudget). */
  maxBytesPerCall: number;
  /** A connection that carries nothing this long is closed. */
  idleTimeoutMs: number;
}

/** What the proxy reports of each request it decided. */
export interface NetworkNote {
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused (refusals only). */
  reason?: string;
  /** The address it connected to (allowed ones only). */
  address?: string;
  /**
   * Only for a cut over `maxNetworkBytesPerCall` (`host` empty, `port` 0): the bytes charged to the
   * call, or to the time between calls, when it ran over.
   */
  bytes?: number;
}

export interface ProxyOptions {
  socketPath: string;
  policy: PolicySettings;
  limits: ProxyLimits;
  /** The calls in flight and what they may move. */
  budget: CallBudget;
  onNote(note: NetworkNote): void;
}

/** The header a refusal's sentence travels in too, for clients that read headers, not bodies. */
export const REFUSAL_HEADER = 'x-toolhost-refusal';
const CONNECT_BOUND_MS = 10_000;
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export function startProxy(options: ProxyOptions): Promise<Server> {
  let open = 0;
  // What forwarded bodies have moved on each client connection, for its per-connection bound.
  const carried = new WeakMap<object, { bytes: number }>();
  const server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 60_000, headersTimeout: 30_000 });
  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
    });
    socket.on('error', () => {});
    if (open > options.limits.maxConnections) {
      const message = `the process isolation tier refused a network connection (package ${options.policy.packageName} already has ${options.limits.maxConnections} open, the most it may)`;
      options.onNote({ host: '', port: 0, allowed: false, reason: 'too many connections' });
      socket.end(response(503, message));
      socket.destroySoon?.();
    }
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void tunnel(options, req, socket as Socket, head).catch(() => socket.destroy());
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let used = carried.get(req.socket);
    if (used === undefined) {
      used = { bytes: 0 };
      carried.set(req.socket, used);
    }
    void forward(options, req, res, used).catch(() => res.destroy());
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(
      error.code === 'HPE_HEADER_OVERFLOW'
        ? response(431, 'the process isolation tier refused a request whose head is over 16 KiB')
        : response(400, 'the process isolation tier refused a malformed request'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      server.on('error', () => {});
      resolve(server);
    });
  });
}

async function tunnel(
  options: ProxyOptions,
  req: IncomingMessage,
  client: Socket,
  head: Buffer,
): Promise<void> {
  const target = parseAuthority(req.url ?? '');
  if (!options.budget.running) {
    client.end(
      response(403, idleRefusal(options, target?.host ?? String(req.url).slice(0, 256), target?.port ?? 0)),
    );
    return;
  }
  const decision = await decided(options, target?.host ?? String(req.url).slice(0, 256), target?.port ?? 0);
  if (!decision.allowed) {
    client.end(response(403, refusalMessage(decision)));
    return;
  }
  const upstream = connect({ host: decision.address, port: decision.port });
  upstream.setTimeout(CONNECT_BOUND_MS, () =>
    upstream.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
  );
  upstream.once('error', (error: NodeJS.ErrnoException) => {
    if (client.writable && !client.destroyed && upstream.connecting !== false) {
      client.end(response(502, unreachable(decision, error)));
    } else client.destroy();
  });
  upstream.once('connect', () => {
    upstream.setTimeout(0);
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    splice(options, client, upstream, head);
  });
}

async function forward(
  options: ProxyOptions,
  req: IncomingMessage,
  res: ServerResponse,
  used: { bytes: number },
): Promise<void> {
  let url: URL | undefined;
  try {
    url = new URL(req.url ?? '');
  } catch {
    url = undefined;
  }
  if (url === undefined || url.protocol !== 'http:') {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end('the process isolation tier forwards only absolute http: requests (use CONNECT for TLS)');
    return;
  }
  const port = url.port === '' ? 80 : Number(url.port);
  if (!options.budget.running) {
    const message = idleRefusal(options, url.hostname, port);
    res.writeHead(403, { 'content-type': 'text/plain', [REFUSAL_HEADER]: encodeURIComponent(message) });
    res.end(message);
    return;
  }
  const decision = await decided(options, url.hostname, port);
  if (!decision.allowed) {
    const message = refusalMessage(decision);
    res.writeHead(403, { 'content-type': 'text/plain', [REFUSAL_HEADER]: encodeURIComponent(message) });
    res.end(message);
    return;
  }
  const headers = { ...req.headers };
  for (const name of ['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive'])
    delete headers[name];
  // The host the decision was about, not one the tool names in a header (a CDN in front of a granted
  // host would route by it).
  headers.host = url.host;
  const upstream = request({
    host: decision.address,
    port,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    timeout: options.limits.idleTimeoutMs,
  });
  upstream.on('timeout', () => upstream.destroy());
  // The bodies both ways are the call's bytes, and the client connection's: they count for both.
  const relay = new Relay({
    charge: (bytes) => {
      used.bytes += bytes;
      if (used.bytes > options.limits.maxBytesPerConnection) {
        relay.destroy();
        return false;
      }
      return options.budget.charge(bytes);
    },
    destroy: () => {
      upstream.destroy();
      res.destroy();
      req.socket.destroy();
    },
  });
  res.once('close', options.budget.add(relay));
  upstream.once('error', (error: NodeJS.ErrnoException) => {
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(unreachable(decision, error));
    } else res.destroy();
  });
  upstream.once('response', (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    relay.pipe(answer, res);
  });
  relay.pipe(req, upstream);
}

async function decided(options: ProxyOptions, host: string, port: number): Promise<Decision> {
  const decision = await decide(options.policy, host, port);
  options.onNote(
    decision.allowed
      ? { host: decision.host, port, allowed: true, address: decision.address }
      : { host: decision.host, port, allowed: false, reason: decision.reason },
  );
  return decision;
}

/**
 * Both ways, with backpressure, counting bytes for the connection and for the call; either side's
 * end or error ends both.
 */
function splice(options: ProxyOptions, client: Socket, upstream: Socket, head: Buffer): void {
  let bytes = 0;
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  const charge = (count: number) => {
    bytes += count;
    if (bytes > options.limits.maxBytesPerConnection) {
      end();
      return false;
    }
    return options.budget.charge(count);
  };
  const relay = new Relay({ charge, destroy: end });
  const remove = options.budget.add(relay);
  if (head.length > 0 && charge(head.length)) upstream.write(head);
  relay.pipe(client, upstream);
  relay.pipe(upstream, client);
  for (const socket of [client, upstream]) {
    socket.setTimeout(options.limits.idleTimeoutMs, end);
    socket.once('close', () => {
      remove();
      end();
    });
    socket.on('error', end);
  }
}

/** The refusal of a connection asked for while none of the package's calls is in flight. */
function idleRefusal(options: ProxyOptions, host: string, port: number): string {
  const reason = `no call of package ${options.policy.packageName} is running`;
  options.onNote({ host, port, allowed: false, reason });
  return refusalMessage({ host, port, reason });
}

function unreachable(
  decision: { host: string; port: number; address: string },
  error: NodeJS.ErrnoException,
): string {
  return `the process isolation tier could not reach ${hostPort(decision.host, decision.port)} at ${decision.address} (${error.code ?? 'connection failed'})`;
}

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6). */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const colon = authority.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const port = authority.slice(colon + 1);
  if (!/^[0-9]{1,5}$/.test(port)) return undefined;
  return { host: authority.slice(0, colon), port: Number(port) };
}

function response(status: number, message: string): string {
  const body = Buffer.from(message, 'utf8');
  const reason = STATUS_TEXT[status] ?? 'Bad Request';
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\n${REFUSAL_HEADER}: ${encodeURIComponent(message)}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${message}`;
}
