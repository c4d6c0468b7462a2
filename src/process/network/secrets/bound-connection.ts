/**
 * The requests on one intercepted connection to a bound host (TLS terminated at the proxy, plain
 * HTTP the binding allows, or plain HTTP from toolhost's agents), read without Node's HTTP server:
 * Node's own parser (llhttp, strict, the parser `node:http`'s server reads with: ambiguous framing,
 * obs-fold and bad header bytes are refused the same way) takes each request apart, and each is
 * sent on (bound-request.ts) only after the answer before it ended, its answer written here, framed
 * by the proxy alone (chunked; or, to a client that closes, to the close). A request that names
 * another host, or asks to switch protocols, is refused and the connection closed.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Decision } from '../policy.js';
import type { ProxyOptions } from '../proxy-options.js';
import { hostPort, normalHost } from '../rules.js';
import { sendBound } from './bound-request.js';
import { type LlhttpParser, requireNodeHttpParser } from './node-http-parser.js';
import type { ProxySecret } from './proxy-secrets.js';
import { RawAnswer, RawRequest } from './raw-exchange.js';
import type { UpstreamPool } from './upstream.js';

/** The largest request head (as the proxy's own server). */
const MAX_REQUEST_HEAD = 16 * 1024;
/** How long a request's head may take to arrive, and the whole request (as Node's server's defaults). */
const HEAD_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 60_000;
/** How long a connection ended after a held body waits for the tool to end its side. */
const LINGER_MS = 5_000;

/** What the proxy decided about the tunnel the connection is in. */
export interface InterceptedTunnel {
  decision: Extract<Decision, { allowed: true }>;
  bound: ProxySecret[];
  /** The tool asked for TLS (terminated here, or left to the proxy): upstream is TLS. */
  secure: boolean;
}

/** Reads and answers the requests on `socket`, one after the other, until it closes. */
export function serveBound(
  socket: Socket | TLSSocket,
  tunnel: InterceptedTunnel,
  options: ProxyOptions,
  upstreams: UpstreamPool,
): void {
  new BoundConnection(socket, tunnel, options, upstreams).start();
}

class BoundConnection {
  readonly #socket: Socket | TLSSocket;
  readonly #tunnel: InterceptedTunnel;
  readonly #options: ProxyOptions;
  readonly #upstreams: UpstreamPool;
  readonly #parser: LlhttpParser;
  readonly #used = { bytes: 0 };
  #lines: string[] = [];
  #url = '';
  /** The request whose body the parser reads now. */
  #reading: RawRequest | undefined;
  /** The requests read whose turn has not come (their bodies held), the first the one in flight. */
  readonly #waiting: RawRequest[] = [];
  #beganAt = 0;
  #headComplete = true;
  #closed = false;
  /** The answer being written. */
  #inFlight: RawAnswer | undefined;
  /** The Host header of the last request sent on (checked then). */
  #hostSeen: string | undefined;

  constructor(
    socket: Socket | TLSSocket,
    tunnel: InterceptedTunnel,
    options: ProxyOptions,
    upstreams: UpstreamPool,
  ) {
    this.#socket = socket;
    this.#tunnel = tunnel;
    this.#options = options;
    this.#upstreams = upstreams;
    const { HTTPParser } = requireNodeHttpParser();
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.REQUEST, {}, MAX_REQUEST_HEAD, 0);
    parser[HTTPParser.kOnMessageBegin] = () => {
      // Each request starts clean: nothing of the one before (its trailers, say) is carried over.
      this.#lines = [];
      this.#url = '';
      this.#beganAt = Date.now();
      this.#headComplete = false;
    };
    parser[HTTPParser.kOnHeaders] = (lines: string[], url: string) => {
      // Past the head, llhttp hands over a chunked body's trailers (and the URL again): dropped.
      if (this.#headComplete) return;
      for (const line of lines) this.#lines.push(line);
      this.#url += url;
    };
    parser[HTTPParser.kOnHeadersComplete] = this.#onHead.bind(this);
    parser[HTTPParser.kOnBody] = (bytes: Buffer) => this.#reading?.push(bytes);
    parser[HTTPParser.kOnMessageComplete] = () => {
      const request = this.#reading;
      this.#reading = undefined;
      request?.finish();
    };
    this.#parser = parser;
  }

  start(): void {
    const socket = this.#socket;
    socket.on('data', (bytes: Buffer) => this.#read(bytes));
    // The tool ended its side: as Node's server does (without `allowHalfOpen`), the connection ends,
    // and an answer in flight with it (a tool gone away looks the same, and a stream of events
    // would hold the connection to the server until its idle time).
    socket.once('end', () => this.#close());
    socket.once('close', () => {
      this.#closed = true;
      // An answer the tool no longer reads ends its exchange, its connection upstream too.
      this.#inFlight?.destroy();
      for (const request of this.#waiting) request.destroy();
      this.#parser.close();
    });
    socket.resume();
  }

  #read(bytes: Buffer): void {
    if (this.#closed) return;
    const now = this.#beganAt === 0 ? 0 : Date.now() - this.#beganAt;
    if (
      (!this.#headComplete && now > HEAD_TIMEOUT_MS) ||
      (this.#reading !== undefined && now > REQUEST_TIMEOUT_MS)
    ) {
      this.#close();
      return;
    }
    const result = this.#parser.execute(bytes);
    // A request that doesn't parse (strictly) ends the connection: nothing of it goes on.
    if (result instanceof Error) this.#close();
  }

  #onHead(
    major: number,
    minor: number,
    lines: string[] | undefined,
    method: number,
    url: string | undefined,
    _statusCode: number,
    _statusMessage: string,
    upgrade: boolean,
    keepAlive: boolean,
  ): number {
    const rawHeaders = lines === undefined ? this.#lines : [...this.#lines, ...lines];
    const path = url === undefined || url === '' ? this.#url : this.#url + url;
    this.#lines = [];
    this.#url = '';
    this.#headComplete = true;
    // A client that closes (HTTP/1.0, or `connection: close`) has its answer end with the close.
    const request = new RawRequest(this.#socket, {
      method: requireNodeHttpParser().methods[method] ?? 'GET',
      path,
      rawHeaders,
      keepAlive: keepAlive && major === 1 && minor === 1,
      upgrade,
    });
    this.#reading = upgrade ? undefined : request;
    this.#waiting.push(request);
    if (this.#waiting.length === 1) this.#begin(request);
    // A request read while one is in flight waits, and so does the connection's reading.
    else this.#socket.pause();
    // A protocol switch is not read past its head (it is refused); a request's body is.
    return upgrade ? 2 : 0;
  }

  /** Sends `request` on (its turn came), or refuses it. */
  #begin(request: RawRequest): void {
    const { decision, bound, secure } = this.#tunnel;
    const answer = new RawAnswer(this.#socket, request.keepAlive, (keepOpen) =>
      this.#answered(request, keepOpen),
    );
    this.#inFlight = answer;
    if (request.upgrade) {
      // A protocol switch would carry the value (or a placeholder) past the swap: not through here.
      const host = request.host ?? '';
      answer.refuse(
        501,
        `the process isolation tier does not relay a protocol upgrade to ${host.slice(0, 256)}, a host a secret is bound to`,
      );
      return;
    }
    const host = request.host;
    // The same Host as the last request's passes as it did (most requests on a connection repeat it).
    const sameAsLast = host !== undefined && host === this.#hostSeen;
    if (
      !request.path.startsWith('/') ||
      !(sameAsLast || sameHost(host, decision.host, decision.port, secure))
    ) {
      const message = `the process isolation tier refused a request in the tunnel to ${hostPort(decision.host, decision.port)} that names another host (${JSON.stringify(String(host ?? '').slice(0, 256))}): nothing swapped`;
      this.#options.onNote({ host: decision.host, port: decision.port, allowed: false, reason: message });
      answer.refuse(421, message);
      return;
    }
    this.#hostSeen = host;
    if (request.expectsContinue) answer.continue();
    sendBound(
      this.#options,
      { request, answer, used: this.#used },
      {
        host: decision.host,
        port: decision.port,
        address: decision.address,
        secure,
        bound,
        path: request.path,
      },
      this.#upstreams,
    );
    request.flush();
  }

  /** An answer ended whole: the next request's turn, or the connection's end. */
  #answered(request: RawRequest, keepOpen: boolean): void {
    this.#inFlight = undefined;
    if (this.#waiting[0] === request) this.#waiting.shift();
    // Answered while a budget held its body (a refusal, a 502): the rest of the body is not read on
    // (it would cross uncounted); the connection ends after the answer.
    const held = this.#reading === request && request.readsNoMore;
    if (!keepOpen || this.#closed || held) {
      this.#close(true);
      if (held) {
        // What the tool still sends is read and dropped (never parsed, never sent on), so that its
        // end is seen and the connection closes; one that never ends is cut after LINGER_MS.
        this.#socket.resume();
        setTimeout(() => this.#socket.destroy(), LINGER_MS).unref();
      }
      return;
    }
    const next = this.#waiting[0];
    if (next !== undefined) this.#begin(next);
    // Reading waited while requests did; with one in flight and none behind, its body (perhaps
    // not all read yet) and what follows are read again.
    if (this.#waiting.length <= 1 && !this.#closed) this.#socket.resume();
  }

  /** Ends the connection: after what was written (`gently`), or at once. */
  #close(gently = false): void {
    if (this.#closed) return;
    this.#closed = true;
    if (gently) this.#socket.end();
    else this.#socket.destroy();
  }
}

/** Whether a Host header names the tunnel's host and port (the scheme's default port may be left out). */
export function sameHost(header: string | undefined, host: string, port: number, secure: boolean): boolean {
  if (header === undefined) return false;
  const colon = header.lastIndexOf(':');
  const hasPort = colon > header.lastIndexOf(']');
  const name = normalHost(hasPort ? header.slice(0, colon) : header);
  const portText = hasPort ? header.slice(colon + 1) : '';
  const named = hasPort ? (/^[0-9]{1,5}$/.test(portText) ? Number(portText) : -1) : undefined;
  return name === host && (named === undefined ? port === (secure ? 443 : 80) : named === port);
}
