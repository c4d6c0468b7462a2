/**
 * The egress tunnels of a sandboxed process, and Node's `http` and `https` agents over them: every
 * connection is a `CONNECT host:port` through the egress proxy's Unix socket. TLS is done here, end
 * to end, so the proxy never holds the plain text, except to a host a secret is bound to: there the
 * proxy would terminate the tool's TLS anyway (to swap the secret in), so an https connection offers
 * the proxy its TLS, and for a bound host the proxy takes it and the tunnel carries plain HTTP on
 * this private socket (one TLS, the proxy's upstream, instead of two). A refusal comes back as the
 * proxy's sentence, thrown as the error the model reads. Nothing here loads undici: `fetch`'s dispatcher over the same
 * tunnels is child-agents.ts's, so a process that only needs these (an MCP server that has not
 * fetched yet, see mcp/servers/egress-preload.ts) doesn't pay for undici.
 */
import http from 'node:http';
import https from 'node:https';
import { connect, isIP, type Socket } from 'node:net';
import tls from 'node:tls';

export interface EgressRoute {
  /** The proxy's Unix socket, as the sandbox sees it. */
  socketPath: string;
  /** PEM certificates trusted besides Node's own roots (tests with a local HTTPS server). */
  trustCertificates?: string | undefined;
}

/** The code of the error a refused connection throws (its message says what was refused and why). */
export const NETWORK_REFUSED_CODE = 'ERR_TOOLHOST_NETWORK_REFUSED';
/** The most of the proxy's answer to a CONNECT read before giving up on it. */
const MAX_ANSWER_BYTES = 16 * 1024;

/**
 * The header (and its value) with which a tunnel offers the proxy to do its TLS; the proxy's `200`
 * says it back when it takes the offer (secrets/intercept.ts; kept here as text so that loading the
 * agents loads nothing of the proxy's).
 */
const TLS_AT_PROXY = 'x-toolhost-tls-at-proxy: https';

/**
 * Opens a tunnel to `host:port` through the proxy. With `offerTls` (an https connection that names
 * no other server), the proxy is offered the TLS: it takes it for a host a secret is bound to, and
 * then `tlsAtProxy` is true and the tunnel carries plain HTTP (the proxy would terminate the tool's
 * TLS there anyway, so TLS on this private socket protects nothing); else the caller does its TLS.
 */
export type OpenTunnel = (
  host: string,
  port: number,
  offerTls?: boolean,
) => Promise<{ socket: Socket; tlsAtProxy: boolean }>;

/** The tunnels of `route`, and the certificates TLS over them trusts (undefined: Node's own roots). */
export function tunnelsOf(route: EgressRoute): { open: OpenTunnel; ca: string[] | undefined } {
  const ca =
    route.trustCertificates === undefined ? undefined : [...tls.rootCertificates, route.trustCertificates];
  return { open: (host, port, offerTls) => tunnel(route.socketPath, host, port, offerTls === true), ca };
}

/** Points `http`'s and `https`'s global agents at the tunnels. */
export function routeNodeAgents(open: OpenTunnel, ca: string[] | undefined): void {
  const keepAlive = { keepAlive: true };
  (http as { globalAgent: http.Agent }).globalAgent = tunnelledHttpAgent(open, keepAlive);
  (https as { globalAgent: https.Agent }).globalAgent = tunnelledHttpsAgent(open, ca, keepAlive);
}

/** `http`'s global agent: each connection a tunnel. */
function tunnelledHttpAgent(open: OpenTunnel, agentOptions: http.AgentOptions): http.Agent {
  class TunnelledHttpAgent extends http.Agent {
    override createConnection(
      options: http.ClientRequestArgs,
      callback?: (error: Error | null, socket: Socket) => void,
    ): undefined {
      open(hostOf(options), Number(options.port) || 80).then(
        ({ socket }) => callback?.(null, socket),
        (error: Error) => callback?.(error, undefined as unknown as Socket),
      );
      return undefined;
    }
  }
  return new TunnelledHttpAgent(agentOptions);
}

/** `https`'s global agent: each connection a tunnel with TLS over it, the request's own TLS options kept. */
function tunnelledHttpsAgent(
  open: OpenTunnel,
  ca: string[] | undefined,
  agentOptions: https.AgentOptions,
): https.Agent {
  class TunnelledHttpsAgent extends https.Agent {
    override createConnection(
      options: https.RequestOptions,
      callback?: (error: Error | null, socket: Socket) => void,
    ): undefined {
      const host = hostOf(options);
      open(host, Number(options.port) || 443, offersTls(host, options.servername)).then(
        ({ socket, tlsAtProxy }) => {
          if (tlsAtProxy) {
            callback?.(null, socket);
            return;
          }
          const { path: _path, ...tlsOptions } = options as https.RequestOptions & { path?: string };
          const secure = tls.connect({
            ...(tlsOptions as tls.ConnectionOptions),
            socket,
            servername: options.servername ?? serverName(host),
            ...(options.ca === undefined && ca !== undefined ? { ca } : {}),
          });
          secure.once('secureConnect', () => callback?.(null, secure));
          secure.once('error', (error) => callback?.(error, undefined as unknown as Socket));
        },
        (error: Error) => callback?.(error, undefined as unknown as Socket),
      );
      return undefined;
    }
  }
  return new TunnelledHttpsAgent(agentOptions);
}

/** A tunnel to `host:port` through the proxy, or the proxy's refusal as an error. */
function tunnel(
  socketPath: string,
  host: string,
  port: number,
  offerTls: boolean,
): Promise<{ socket: Socket; tlsAtProxy: boolean }> {
  const authority = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath });
    let answer = Buffer.alloc(0);
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf('\r\n\r\n');
      if (end < 0) {
        if (answer.length > MAX_ANSWER_BYTES) fail(unreachable(authority, 'its answer was too long'));
        return;
      }
      socket.off('data', onData);
      socket.off('end', onEnd);
      const head = answer.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(head[0]?.split(' ')[1]);
      if (status === 200) {
        const rest = answer.subarray(end + 4);
        if (rest.length > 0) socket.unshift(rest);
        socket.off('error', fail);
        const tlsAtProxy = offerTls && head.some((line) => line.toLowerCase() === TLS_AT_PROXY);
        resolve({ socket, tlsAtProxy });
        return;
      }
      fail(refused(head, authority, status));
    };
    const onEnd = () => fail(unreachable(authority, 'it closed the connection'));
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.on('error', fail);
    const offer = offerTls ? `${TLS_AT_PROXY}\r\n` : '';
    socket.once('connect', () =>
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${offer}\r\n`),
    );
  });
}

function refused(head: string[], authority: string, status: number): Error {
  const line = head.find((text) => text.toLowerCase().startsWith('x-toolhost-refusal:'));
  let message: string | undefined;
  try {
    message = line === undefined ? undefined : decodeURIComponent(line.slice(line.indexOf(':') + 1).trim());
  } catch {
    message = undefined;
  }
  return Object.assign(
    new Error(
      message ??
        `the process isolation tier refused network access to ${authority} (the proxy answered ${status})`,
    ),
    { code: NETWORK_REFUSED_CODE },
  );
}

function unreachable(authority: string, why: string): Error {
  return Object.assign(
    new Error(`the process isolation tier could not open ${authority}: its network proxy failed (${why})`),
    { code: NETWORK_REFUSED_CODE },
  );
}

function hostOf(options: { host?: string | null | undefined; hostname?: string | null | undefined }): string {
  const host = options.hostname ?? options.host ?? 'localhost';
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Whether an https connection may leave its TLS to the proxy: only one that names no other server
 * than its host (a different `servername` takes the tool's own TLS, which the proxy refuses for a
 * bound host as it always has).
 */
export function offersTls(host: string, servername: string | null | undefined): boolean {
  return (
    servername === undefined || servername === null || servername === '' || servername === serverName(host)
  );
}

/** SNI takes names only. */
export function serverName(host: string): string | undefined {
  return isIP(host) === 0 ? host : undefined;
}
