/**
 * One request to a host a secret is bound to, in plain text at the proxy (TLS terminated there, or
 * plain HTTP the binding allows): the bound secrets' placeholders become their values in the
 * request's headers and its URL's query, and nowhere else; any other secret's placeholder goes on
 * unreplaced and is reported; the request asks for an uncompressed answer, whose headers and body
 * have every value turned back into its placeholder before they enter the sandbox. The upstream is
 * the address the proxy decided on, checked (for TLS) against the host's own trust store. Bodies
 * count toward the connection's bytes and the call's, as the proxy's other relays do.
 */
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { ProxyOptions } from '../proxy-options.js';
import { exchangeRelay } from '../relay.js';
import { hostPort } from '../rules.js';
import { type BoundAnswerSink, type BoundRequest, hasBody } from './bound-exchange.js';
import {
  answerNeedles,
  type ProxySecret,
  type ProxySecrets,
  requestNeedles,
  strayPlaceholderReason,
} from './proxy-secrets.js';
import { ChunkReplacer, type Needle, replaceInText } from './replace.js';
import { RequestBody, requestHead } from './request-head.js';
import { UpstreamPool } from './upstream.js';

/** Where a bound request goes: the host as decided, and the secrets bound to it there. */
export interface BoundTarget {
  host: string;
  port: number;
  address: string;
  /** Over TLS to the upstream (the tool spoke TLS to the proxy). */
  secure: boolean;
  bound: readonly ProxySecret[];
  /** The request's path and query, as the tool sent them. */
  path: string;
}

/**
 * The kept-alive connections to bound upstreams, one pool per proxy. Their trust store is one TLS
 * context, made once: a `ca` list per connection would be some hundred kilobytes built each time.
 */
export function boundUpstreams(options: {
  upstreamCa: string[] | undefined;
  idleTimeoutMs: number;
}): UpstreamPool {
  return new UpstreamPool({
    context: options.upstreamCa === undefined ? undefined : createSecureContext({ ca: options.upstreamCa }),
    idleTimeoutMs: options.idleTimeoutMs,
  });
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

/**
 * The headers of a bound request the proxy writes or frames itself: a tool's header that reads as
 * one of these with `_` for `-` is dropped.
 */
const WRITTEN_BY_PROXY = new Set([...HOP_BY_HOP, 'content-length', 'host', 'accept-encoding']);

/**
 * Sends a request to a bound host with its secrets swapped in, and the answer back with them out.
 * A request Node refuses to send (a header it can't write) is answered 502, never thrown into the
 * proxy's thread.
 */
export function sendBound(
  options: ProxyOptions,
  exchange: BoundExchange,
  target: BoundTarget,
  upstreams: UpstreamPool,
): void {
  try {
    send(options, exchange, target, upstreams);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'it could not be sent';
    answerText(
      exchange.answer,
      `the process isolation tier could not send the request to ${hostPort(target.host, target.port)} (${code})`,
    );
  }
}

/** One request to a bound host, where its answer goes, and its connection's bytes so far. */
export interface BoundExchange {
  request: BoundRequest;
  answer: BoundAnswerSink;
  used: { bytes: number };
}

/** Answers `502` with `message` (or, past the answer's head, ends its connection). */
function answerText(answer: BoundAnswerSink, message: string): void {
  if (answer.headersSent) {
    answer.destroy();
    return;
  }
  const body = Buffer.from(message, 'utf8');
  answer.writeHead(
    502,
    ['content-type', 'text/plain; charset=utf-8', 'content-length', String(body.length)],
    false,
  );
  answer.end(body);
}

function send(
  options: ProxyOptions,
  exchange: BoundExchange,
  target: BoundTarget,
  upstreams: UpstreamPool,
): void {
  const { request, answer: sink, used } = exchange;
  const proxySecrets = options.secrets;
  const where = hostPort(target.host, target.port);
  const told = new Set<string>();
  const notice = (place: string) => (name: string) => {
    // A bound secret's placeholder is swapped (headers, query) or, elsewhere, harmless on its own host.
    if (target.bound.some((secret) => secret.name === name)) return;
    if (told.has(`${name} ${place}`)) return;
    told.add(`${name} ${place}`);
    options.onNote({
      host: target.host,
      port: target.port,
      allowed: true,
      secret: name,
      reason: strayPlaceholderReason(name, place, where),
    });
  };
  const {
    swapped,
    noticed,
    inQuery,
    answer: outNeedles,
    inAnswerName,
  } = needlesOf(proxySecrets, target.bound);
  const query = target.path.indexOf('?');
  const path =
    query < 0
      ? replaceInText(target.path, noticed, notice('the path'))
      : replaceInText(target.path.slice(0, query), noticed, notice('the path')) +
        replaceInText(target.path.slice(query), inQuery, notice('the query'));
  // The head the tool sent, parsed strictly by Node's server, written anew: the host is the bound
  // one (never a name the tool wrote, a second Host line included), the answer uncompressed (one
  // compressed upstream would hide a value echoed in it from the swap back), hop-by-hop lines
  // dropped, and a chunked body chunked again by the proxy.
  const lines: string[] = [];
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = (raw[index] as string).toLowerCase();
    if (HOP_BY_HOP.has(name) || name === 'accept-encoding' || name === 'host') continue;
    // `transfer_encoding`, `content_length`: a server that reads `_` as `-` (CGI, WSGI) would frame
    // the body the tool's way beside the proxy's framing. Dropped, as the proxy writes those itself.
    if (name.includes('_') && WRITTEN_BY_PROXY.has(name.replaceAll('_', '-'))) continue;
    replaceInText(name, noticed, notice('a header name'));
    lines.push(name, replaceInText(raw[index + 1] as string, swapped, notice(`header ${name}`)));
  }
  const defaultPort = target.secure ? 443 : 80;
  const host =
    target.port === defaultPort
      ? hostPort(target.host, target.port).slice(0, -`:${target.port}`.length)
      : hostPort(target.host, target.port);
  const { chunked, method } = request;
  const head = requestHead({ method, path, host, lines, chunked });
  const connection = upstreams.take({
    address: target.address,
    port: target.port,
    secure: target.secure,
    servername: target.secure && isIP(target.host) === 0 ? target.host : undefined,
  });
  const bodyFollows = hasBody(request);
  const answer = connection.send(head, method, bodyFollows);
  const bodies = exchangeRelay(options, used, {
    destroy: () => {
      answer.destroy();
      sink.destroy();
      request.destroy();
    },
    whenClosed: (listener) => sink.whenClosed(listener),
  });
  // An answer's end that is not the upstream answer's (the tool went away) ends the upstream
  // connection: it is not read on into nothing, nor used again (after a whole answer, nothing).
  sink.whenClosed(() => {
    answer.destroy();
    // A body a budget held stays held: the answer's end (a refusal, a 502) does not read it on.
    if (bodies.held) request.readNoMore?.();
  });
  answer.once('error', (error: NodeJS.ErrnoException) => {
    // Past the answer's first bytes to the tool, the answer can only be cut short; before them (a
    // head held for its body), it is answered 502 instead.
    if (sink.headersSent) {
      sink.destroy();
      return;
    }
    // Reported: the CONNECT was allowed (and said so), this request got no answer.
    const message = upstreamFailure(target, error, answer.responded);
    options.onNote({ host: target.host, port: target.port, allowed: false, reason: message });
    answerText(sink, message);
  });
  answer.once('response', (statusCode: number, answerLines: string[]) => {
    const noBody = method === 'HEAD' || statusCode === 204 || statusCode === 304;
    const out: string[] = [];
    for (let index = 0; index + 1 < answerLines.length; index += 2) {
      const name = (answerLines[index] as string).toLowerCase();
      if (HOP_BY_HOP.has(name) || (name === 'content-length' && !noBody)) continue;
      // A value in a header's name (lowercased here, so it can't be swapped back as it was): the
      // line is dropped, and the rest of the answer goes on.
      if (inAnswerName.some((form) => name.includes(form))) continue;
      out.push(name, replaceInText(answerLines[index + 1] as string, outNeedles));
    }
    // Corked from the head on: the head and what this read of the answer brings go as one write.
    const output = sink.output;
    output?.cork();
    answer.output = output;
    try {
      sink.writeHead(statusCode, out, noBody);
    } catch {
      // A status Node won't write (over 999): the answer can't be relayed as it is.
      answer.destroy();
      sink.destroy();
      return;
    }
    bodies.pipe(answer, sink, new ChunkReplacer(outNeedles));
  });
  if (!bodyFollows) {
    // Nothing to search or send on: the upstream request is whole with its head.
    request.resume();
    return;
  }
  bodies.pipe(
    request,
    new RequestBody(connection, answer, request.contentLength),
    new ChunkReplacer(noticed, notice('the body')),
  );
}

/** The codes of a certificate that did not verify (Node's own, and OpenSSL's verify errors). */
const CERTIFICATE_FAILURE = /^ERR_TLS_CERT_ALTNAME_INVALID$|CERT|UNABLE_TO_|SIGNATURE/;

/** What the tool reads when a bound request could not be sent: why, and for a certificate, what to do. */
function upstreamFailure(target: BoundTarget, error: NodeJS.ErrnoException, responded: boolean): string {
  const where = hostPort(target.host, target.port);
  const code = error.code ?? 'connection failed';
  if (responded)
    return `the process isolation tier got an answer from ${where} that broke off before its body (${code})`;
  if (target.secure && CERTIFICATE_FAILURE.test(code)) {
    return `the process isolation tier did not send the request to ${where}: its certificate did not verify against the host's trust store (${code}); a private CA goes in the host process's NODE_EXTRA_CA_CERTS`;
  }
  return `the process isolation tier could not reach ${where} at ${target.address} (${code})`;
}

/** The needles of requests to a set of bound secrets, and of their answers. */
interface BoundNeedles {
  /** Headers: each bound placeholder becomes its value; every other one is noticed. */
  swapped: Needle[];
  /** The path and the body: every placeholder only noticed (even a bound one goes on as it is). */
  noticed: Needle[];
  /**
   * The query: as `swapped`, the value percent-encoded (a `&`, `#`, `+` or space of it must not
   * change the query).
   */
  inQuery: Needle[];
  /** The answer: every value (in each form the proxy sends it in) goes back to its placeholder. */
  answer: Needle[];
  /** The same forms lowercased: an answer header whose (lowercased) name holds one is dropped. */
  inAnswerName: string[];
}

/** Made once per set (an intercepted connection keeps one for all its requests). */
const needleSets = new WeakMap<readonly ProxySecret[], BoundNeedles>();

function needlesOf(proxySecrets: ProxySecrets | undefined, bound: readonly ProxySecret[]): BoundNeedles {
  let needles = needleSets.get(bound);
  if (needles === undefined) {
    const swapped = requestNeedles(proxySecrets, bound);
    const answer = answerNeedles(proxySecrets);
    needles = {
      swapped,
      noticed: swapped.map((needle) => ({ ...needle, replace: undefined })),
      inQuery: swapped.map((needle) =>
        needle.replace === undefined ? needle : { ...needle, replace: encodeURIComponent(needle.replace) },
      ),
      answer,
      inAnswerName: [...new Set(answer.map((needle) => needle.find.toLowerCase()))],
    };
    needleSets.set(bound, needles);
  }
  return needles;
}
