/**
 * An egress proxy's plain-HTTP side: an absolute-form request (`GET http://host/path`) decided by
 * the package's grant, then forwarded to the address the decision was about, with the host header
 * set to that host and the proxy's own headers dropped. Both bodies count toward the connection's
 * bytes and the call's.
 */
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Decision } from './policy.js';
import { refusalMessage } from './policy.js';
import { decided, idleRefusal, REFUSAL_HEADER, unreachable } from './proxy-answers.js';
import type { ProxyOptions } from './proxy-options.js';
import { exchangeRelay } from './relay.js';
import { hostPort } from './rules.js';
import { nodeExchange } from './secrets/bound-exchange.js';
import { sendBound } from './secrets/bound-request.js';
import { plainRefusal } from './secrets/intercept.js';
import { boundAt, noticeNeedles, strayPlaceholderReason } from './secrets/proxy-secrets.js';
import { ChunkReplacer, replaceInText } from './secrets/replace.js';
import type { UpstreamPool } from './secrets/upstream.js';

/**
 * Forwards one absolute-form request. `boundUpstreams` are the proxy's kept-alive connections to hosts
 * a secret is bound to (its interceptor's: one set per proxy), present when it has secrets.
 */
export async function forward(
  options: ProxyOptions,
  req: IncomingMessage,
  res: ServerResponse,
  used: { bytes: number },
  boundUpstreams: UpstreamPool | undefined,
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
  const bound = boundAt(options.secrets, decision.host, port);
  if (bound.length > 0 && boundUpstreams !== undefined) {
    const tlsOnly = bound.find((entry) => !entry.plainHttp);
    if (tlsOnly !== undefined) {
      const message = plainRefusal(decision.host, port, tlsOnly.secret.name);
      options.onNote({ host: decision.host, port, allowed: false, reason: message });
      res.writeHead(403, { 'content-type': 'text/plain', [REFUSAL_HEADER]: encodeURIComponent(message) });
      res.end(message);
      return;
    }
    sendBound(
      options,
      { ...nodeExchange(req, res), used },
      {
        host: decision.host,
        port,
        address: decision.address,
        secure: false,
        bound: bound.map((entry) => entry.secret),
        path: `${url.pathname}${url.search}`,
      },
      boundUpstreams,
    );
    return;
  }
  relay(options, { req, res, used }, url, decision);
}

/** Sends an allowed request on to its host and the answer back, both bodies charged as they move. */
function relay(
  options: ProxyOptions,
  { req, res, used }: { req: IncomingMessage; res: ServerResponse; used: { bytes: number } },
  url: URL,
  decision: Extract<Decision, { allowed: true }>,
): void {
  const headers = { ...req.headers };
  for (const name of ['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive'])
    delete headers[name];
  // No secret is bound here: a placeholder sent goes on as it is, and is reported.
  const notice = noticing(options, decision.host, decision.port);
  const needles = noticeNeedles(options.secrets);
  if (needles.length > 0) {
    replaceInText(`${url.pathname}${url.search}`, needles, notice('the URL'));
    for (const [name, value] of Object.entries(headers))
      replaceInText(`${name}: ${String(value)}`, needles, notice(`header ${name}`));
  }
  // The host the decision was about, not one the tool names in a header (a CDN in front of a granted
  // host would route by it).
  headers.host = url.host;
  const upstream = request({
    host: decision.address,
    port: decision.port,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    timeout: options.limits.idleTimeoutMs,
  });
  upstream.on('timeout', () => upstream.destroy());
  // The bodies both ways are the call's bytes, and the client connection's: they count for both.
  const bodies = exchangeRelay(options, used, {
    destroy: () => {
      upstream.destroy();
      res.destroy();
      req.socket.destroy();
    },
    whenClosed: (listener) => res.once('close', listener),
  });
  upstream.once('error', (error: NodeJS.ErrnoException) => {
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(unreachable(decision, error));
    } else res.destroy();
  });
  upstream.once('response', (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    bodies.pipe(answer, res);
  });
  req.on('error', () => upstream.destroy());
  bodies.pipe(
    req,
    upstream,
    needles.length === 0 ? undefined : new ChunkReplacer(needles, notice('the body')),
  );
}

/** Reports each secret whose placeholder a request carries to a host it is not bound to, once a place. */
function noticing(options: ProxyOptions, host: string, port: number) {
  const told = new Set<string>();
  return (place: string) => (name: string) => {
    if (told.has(`${name} ${place}`)) return;
    told.add(`${name} ${place}`);
    options.onNote({
      host,
      port,
      allowed: true,
      secret: name,
      reason: strayPlaceholderReason(name, place, hostPort(host, port)),
    });
  };
}
