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
import tls from 'node:tls';
import { Agent, setGlobalDispatcher } from 'undici';
import {
  type EgressRoute,
  type OpenTunnel,
  offersTls,
  routeNodeAgents,
  serverName,
  tunnelsOf,
} from './tunnel-agents.js';

export { type EgressRoute, NETWORK_REFUSED_CODE } from './tunnel-agents.js';

export function routeThroughProxy(route: EgressRoute): void {
  const { open, ca } = tunnelsOf(route);
  setGlobalDispatcher(tunnelledDispatcher(open, ca));
  routeNodeAgents(open, ca);
}

/** The undici dispatcher (`fetch`'s): each connection a tunnel, with TLS over it for https. */
export function tunnelledDispatcher(open: OpenTunnel, ca: string[] | undefined): Agent {
  return new Agent({
    connect: (options, callback) => {
      const https = options.protocol === 'https:';
      const port = Number(options.port) || (https ? 443 : 80);
      open(options.hostname, port, https && offersTls(options.hostname, options.servername)).then(
        ({ socket, tlsAtProxy }) => {
          if (!https || tlsAtProxy) {
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
