/**
 * Inside a sandboxed package's process, before any tool code runs: Node's `fetch` (and any
 * undici a tool bundles: they share the global dispatcher), `http` and `https` are pointed at the
 * package's egress proxy, through its Unix socket. Every connection is a `CONNECT host:port` tunnel
 * (TLS is done here, end to end, so the proxy never holds the plain text); a refusal comes back as
 * the proxy's sentence, thrown as the error the model reads. This is convenience, not the boundary:
 * the process has no route out but this socket, so a tool that resets the agents or opens a raw
 * socket reaches nothing.
 *
 * Node's own proxy support (`NODE_USE_ENV_PROXY`, Node 24.5 and 22.21) is not used: it is missing
 * on Node 20, and it answers a refused tunnel with a bare status error, without the proxy's reason.
 */
import http from 'node:http';
import https from 'node:https';
import { connect, isIP, type Socket } from 'node:net';
import tls from 'node:tls';
import { Agent, setGlobalDispatcher } from 'undici';

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

export function routeThroughProxy(route: EgressRoute): void {
  const ca =
    route.trustCertificates === undefined ? undefined : [...tls.rootCertificates, route.trustCertificates];
  const open: OpenTunnel = (host, port) => tunnel(route.socketPath, host, port);
  setGlobalDispatcher(tunnelledDispatcher(open, ca));
  const keepAlive = { keepAlive: true };
  (http as { globalAgent: http.Agent }).globalAgent = tunnelledHttpAgent(open, keepAlive);
  (https as { globalAgent: https.Agent }).globalAgent = tunnelledHttpsAgent(open, ca, keepAlive);
}

type OpenTunnel = (host: string, port: number) => Promise<Socket>;

/** The undici dispatcher (`fetch`'s): each connection a tunnel, with TLS over it for https. */
function tunnelledDispatcher(open: OpenTunnel, ca: string[] | undefined): Agent {
  return new Agent({
    connect: (options, callback) => {
      const https = options.protocol === 'https:';
      const port = Number(options.port) || (https ? 443 : 80);
      open(options.hostname, port).then(
        (socket) => {
          if (!https) {
            callback(null, socket);
            return;
          }
          const secure = tls.connect({
            socket,
            servername: options.servername ?? serverName(options.hostname),
            ALPNProtocols: ['http/1.1'],
            ...(ca === undefined ? {} : { ca }),
          });
          secure.once('secureConnect', () => callback(null, secure));
          secure.once('error', (error) => callback(error, null));
        },
        (error: Error) => callback(error, null),
      );
    },
  });
}

/** `http`'s global agent: each connection a tunnel. */
function tunnelledHttpAgent(open: OpenTunnel, agentOptions: http.AgentOptions): http.Agent {
  class TunnelledHttpAgent extends http.Agent {
    override createConnection(
      options: http.ClientRequestArgs,
      callback?: (error: Error | null, socket: Socket) => void,
    ): undefined {
      open(hostOf(options), Number(options.port) || 80).then(
        (socket) => callback?.(null, socket),
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
      open(host, Number(options.port) || 443).then(
        (socket) => {
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
function tunnel(socketPath: string, host: string, port: number): Promise<Socket> {
  const authority = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise<Socket>((resolve, reject) => {
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
        resolve(socket);
        return;
      }
      fail(refused(head, authority, status));
    };
    const onEnd = () => fail(unreachable(authority, 'it closed the connection'));
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.on('error', fail);
    socket.once('connect', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`));
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

/** SNI takes names only. */
function serverName(host: string): string | undefined {
  return isIP(host) === 0 ? host : undefined;
}
