/**
 * One package's egress proxy: an HTTP proxy on a Unix socket that only that package's sandbox can
 * reach. `CONNECT host:port` opens a tunnel (TLS goes through it end to end: the proxy never sees
 * the plain text; to a host a secret is bound to, secrets/intercept.ts reads it instead), and an absolute-form request (`GET http://host/path`) is forwarded. Every request
 * is decided by the package's grant ({@link decide}); a refusal is answered `403` with the sentence
 * the tool error shows, never a bare reset. Bounded: open client connections per package, bytes per
 * connection, bytes per call ({@link CallBudget}: tunnels both ways and forwarded bodies), header
 * sizes, idle time; data is relayed with backpressure, so memory stays a few buffers per connection.
 * A connection asked for while no call of the package is in flight is refused.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { refusalMessage, subjectOf } from './policy.js';
import { decided, idleRefusal, response, unreachable } from './proxy-answers.js';
import { forward } from './proxy-forward.js';
import type { ProxyOptions } from './proxy-options.js';
import { type ChunkMap, Relay } from './relay.js';
import { hostPort, normalHost } from './rules.js';
import { Interceptor, TLS_AT_PROXY_HEADER, TLS_AT_PROXY_OFFER, TLS_HANDSHAKE } from './secrets/intercept.js';
import { boundAt, noticeNeedles, strayPlaceholderReason } from './secrets/proxy-secrets.js';
import { ChunkReplacer } from './secrets/replace.js';

const CONNECT_BOUND_MS = 10_000;
export function startProxy(options: ProxyOptions): Promise<Server> {
  let open = 0;
  // What forwarded bodies have moved on each client connection, for its per-connection bound.
  const carried = new WeakMap<object, { bytes: number }>();
  // TLS is terminated only for hosts a secret is bound to (and only with secrets granted).
  const interceptor = options.secrets === undefined ? undefined : new Interceptor(options);
  const server = createServer({ maxHeaderSize: 16 * 1024, requestTimeout: 60_000, headersTimeout: 30_000 });
  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
    });
    socket.on('error', () => {});
    if (open > options.limits.maxConnections) {
      const message = `the process isolation tier refused a network connection (${subjectOf(options.policy)} already has ${options.limits.maxConnections} open, the most it may)`;
      options.onNote({ host: '', port: 0, allowed: false, reason: 'too many connections' });
      socket.end(response(503, message));
      socket.destroySoon?.();
    }
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void tunnel(options, req, socket as Socket, head, interceptor).catch(() => socket.destroy());
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let used = carried.get(req.socket);
    if (used === undefined) {
      used = { bytes: 0 };
      carried.set(req.socket, used);
    }
    void forward(options, req, res, used, interceptor?.upstreams).catch(() => res.destroy());
  });
  server.once('close', () => interceptor?.close());
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
  interceptor: Interceptor | undefined,
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
  const bound = boundAt(options.secrets, normalHost(decision.host) ?? decision.host, decision.port);
  if (interceptor !== undefined && bound.length > 0) {
    // toolhost's agents offer to leave TLS to the proxy: one TLS (upstream) instead of two. Taken
    // for a bound host only; anywhere else the offer goes unanswered and the tunnel is spliced.
    if (req.headers[TLS_AT_PROXY_HEADER] === TLS_AT_PROXY_OFFER)
      interceptor.takeTls(client, head, decision, bound);
    else interceptor.intercept(client, head, decision, bound);
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
    splice(options, { client, upstream, head }, decision);
  });
}

/**
 * Both ways, with backpressure, counting bytes for the connection and for the call; either side's
 * end or error ends both.
 */
function splice(
  options: ProxyOptions,
  { client, upstream, head }: { client: Socket; upstream: Socket; head: Buffer },
  target: { host: string; port: number },
): void {
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
  // What came with the CONNECT goes first, through the relay like the rest (charged once).
  if (head.length > 0) client.unshift(head);
  relay.pipe(upstream, client);
  for (const socket of [client, upstream]) {
    socket.setTimeout(options.limits.idleTimeoutMs, end);
    socket.once('close', () => {
      remove();
      end();
    });
    socket.on('error', end);
  }
  const watch = strayWatch(options, target);
  if (watch === undefined) {
    relay.pipe(client, upstream);
    return;
  }
  // With secrets, what the tool sends is watched for their placeholders (never changed), unless it
  // is TLS: its bytes are encrypted, and can't show one.
  client.once('data', (first: Buffer) => {
    client.pause();
    client.unshift(first);
    relay.pipe(client, upstream, first[0] === TLS_HANDSHAKE ? undefined : watch);
    if (!relay.held) client.resume();
  });
}

/** The most placeholders one tunnel reports: a tool repeating one can't flood the host's events. */
const MAX_STRAY_REPORTS = 64;

/**
 * What reports each placeholder that passes (a kept-alive tunnel carries many requests: each is
 * reported, up to {@link MAX_STRAY_REPORTS}), or undefined without secrets.
 */
function strayWatch(options: ProxyOptions, target: { host: string; port: number }): ChunkMap | undefined {
  const needles = noticeNeedles(options.secrets);
  if (needles.length === 0) return undefined;
  let reports = 0;
  return new ChunkReplacer(needles, (name) => {
    reports += 1;
    if (reports > MAX_STRAY_REPORTS) return;
    options.onNote({
      host: target.host,
      port: target.port,
      allowed: true,
      secret: name,
      reason: strayPlaceholderReason(name, 'a tunnel', hostPort(target.host, target.port)),
    });
  });
}

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6). */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const colon = authority.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const port = authority.slice(colon + 1);
  if (!/^[0-9]{1,5}$/.test(port)) return undefined;
  return { host: authority.slice(0, colon), port: Number(port) };
}
