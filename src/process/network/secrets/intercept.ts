/**
 * TLS terminated at the proxy, for a `CONNECT` to a host a secret is bound to (and only then: every
 * other tunnel is spliced end to end, unread). The proxy answers the tool's TLS with a certificate
 * for that host from the CA made for this host process (which only the sandbox trusts), reads each
 * HTTP/1.1 request on the connection (kept alive, bodies chunked or not) and sends it on with its
 * secrets swapped in (bound-request.ts). A tool that names another host than its tunnel's (in SNI,
 * or in the Host header) gets nothing swapped: its handshake, or that request, is refused.
 */
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext, TLSSocket } from 'node:tls';
import type { Decision } from '../policy.js';
import { response } from '../proxy-answers.js';
import type { ProxyOptions } from '../proxy-options.js';
import { hostPort, normalHost } from '../rules.js';
import { type InterceptedTunnel, serveBound } from './bound-connection.js';
import { boundUpstreams } from './bound-request.js';
import type { ProxySecret } from './proxy-secrets.js';
import type { UpstreamPool } from './upstream.js';

/** The first byte of a TLS handshake record: anything else in a tunnel is taken as plain HTTP. */
export const TLS_HANDSHAKE = 0x16;

/**
 * The header of a `CONNECT` by toolhost's own agents (tunnel-agents.ts) that offers to speak plain
 * HTTP in the tunnel and leave TLS to the proxy, with {@link TLS_AT_PROXY_OFFER}; the proxy's `200`
 * carries it back, with the same value, only when it takes the offer (a host a secret is bound to).
 */
export const TLS_AT_PROXY_HEADER = 'x-toolhost-tls-at-proxy';
export const TLS_AT_PROXY_OFFER = 'https';

/** One per proxy: the HTTP side of every intercepted connection, its contexts, its upstream connections. */
export class Interceptor {
  readonly #options: ProxyOptions;
  readonly #upstreams: UpstreamPool;
  readonly #contexts = new Map<string, SecureContext>();

  constructor(options: ProxyOptions) {
    this.#options = options;
    this.#upstreams = boundUpstreams({
      upstreamCa: options.secrets?.upstreamCa,
      idleTimeoutMs: options.limits.idleTimeoutMs,
    });
  }

  /**
   * Answers a CONNECT to a bound host: TLS with the tool here (or plain HTTP, where every binding of
   * the host allows it), HTTP requests sent on one by one.
   */
  intercept(
    client: Socket,
    head: Buffer,
    decision: Extract<Decision, { allowed: true }>,
    bound: Array<{ secret: ProxySecret; plainHttp: boolean }>,
  ): void {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    client.on('error', () => client.destroy());
    client.setTimeout(this.#options.limits.idleTimeoutMs, () => client.destroy());
    // A tool that ends the tunnel before its first byte ends it here too (this side is half-open:
    // its end alone would hold the tunnel until its idle time).
    const early = () => client.destroy();
    const begin = (first: Buffer) => {
      client.off('end', early);
      client.pause();
      client.unshift(first);
      const secrets = bound.map((entry) => entry.secret);
      if (first[0] === TLS_HANDSHAKE) this.#terminate(client, decision, secrets);
      else this.#plain(client, decision, bound);
    };
    if (head.length > 0) begin(head);
    else {
      client.once('end', early);
      client.once('data', begin);
    }
  }

  /**
   * Takes the agents' offer ({@link TLS_AT_PROXY_HEADER}) on a CONNECT to a bound host: the tool
   * speaks plain HTTP here over the sandbox's private socket, and each request goes upstream over
   * TLS (verified), the one TLS of its way, with the same parsing, Host rule and swaps as a request
   * in TLS the proxy terminated.
   */
  takeTls(
    client: Socket,
    head: Buffer,
    decision: Extract<Decision, { allowed: true }>,
    bound: Array<{ secret: ProxySecret; plainHttp: boolean }>,
  ): void {
    client.write(
      `HTTP/1.1 200 Connection Established\r\n${TLS_AT_PROXY_HEADER}: ${TLS_AT_PROXY_OFFER}\r\n\r\n`,
    );
    client.on('error', () => client.destroy());
    client.setTimeout(this.#options.limits.idleTimeoutMs, () => client.destroy());
    client.pause();
    if (head.length > 0) client.unshift(head);
    this.#serve(client, { decision, bound: bound.map((entry) => entry.secret), secure: true });
  }

  /** Plain HTTP in a tunnel to a bound host: only where every binding of the host says `http://`. */
  #plain(
    client: Socket,
    decision: Extract<Decision, { allowed: true }>,
    bound: Array<{ secret: ProxySecret; plainHttp: boolean }>,
  ): void {
    const tlsOnly = bound.find((entry) => !entry.plainHttp);
    if (tlsOnly !== undefined) {
      const message = plainRefusal(decision.host, decision.port, tlsOnly.secret.name);
      this.#options.onNote({ host: decision.host, port: decision.port, allowed: false, reason: message });
      client.end(response(403, message));
      return;
    }
    // Paused to read its first byte: the HTTP side reads on from here.
    this.#serve(client, { decision, bound: bound.map((entry) => entry.secret), secure: false });
  }

  #terminate(client: Socket, decision: Extract<Decision, { allowed: true }>, bound: ProxySecret[]): void {
    const context = this.#context(decision.host);
    if (context === undefined) {
      client.destroy();
      return;
    }
    const secure = new TLSSocket(client, {
      isServer: true,
      secureContext: context,
      ALPNProtocols: ['http/1.1'],
      SNICallback: (servername, callback) => {
        if (normalHost(servername) === decision.host) {
          callback(null, context);
          return;
        }
        this.#options.onNote({
          host: decision.host,
          port: decision.port,
          allowed: false,
          reason: `TLS in the tunnel to ${hostPort(decision.host, decision.port)} named ${JSON.stringify(servername.slice(0, 256))}: refused, nothing swapped`,
        });
        callback(new Error('the server name is not the tunnel host'), undefined);
      },
    });
    secure.on('error', () => {
      secure.destroy();
      client.destroy();
    });
    client.on('error', () => secure.destroy());
    this.#serve(secure, { decision, bound, secure: true });
  }

  /** The kept-alive connections to bound hosts: this proxy's only pool (plain HTTP forwarded too). */
  get upstreams(): UpstreamPool {
    return this.#upstreams;
  }

  /** Ends the kept-alive upstream connections. */
  close(): void {
    this.#upstreams.close();
  }

  #serve(socket: Socket | TLSSocket, tunnel: InterceptedTunnel): void {
    serveBound(socket, tunnel, this.#options, this.#upstreams);
  }

  #context(host: string): SecureContext | undefined {
    let context = this.#contexts.get(host);
    const pair = this.#options.secrets?.certificates[host];
    if (context === undefined && pair !== undefined) {
      context = createSecureContext({ key: pair.key, cert: pair.certificate });
      this.#contexts.set(host, context);
    }
    return context;
  }
}

/** The refusal of plain HTTP to a host a secret is bound to over TLS only. */
export function plainRefusal(host: string, port: number, name: string): string {
  return `the process isolation tier refused plain HTTP to ${hostPort(host, port)}: secret ${name} is bound to it, and goes there over TLS only (use https:, or bind the secret to "http://${hostPort(host, port)}")`;
}
