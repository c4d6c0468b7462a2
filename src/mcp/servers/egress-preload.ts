/**
 * Loaded into a sandboxed Node MCP server before its own code (`NODE_OPTIONS=--import`, see
 * server-egress.ts): points Node's `fetch`, `http` and `https` at the server's egress proxy through
 * its Unix socket, as a package process's are (process/network/child-agents.ts). Convenience, not
 * the boundary: the sandbox has no route out but that socket, so a server that resets the agents or
 * opens a raw socket reaches nothing. It reads where the proxy is from its environment, and takes
 * those variables out, so the server's own children don't load it twice through the agents.
 */
import { readFileSync } from 'node:fs';
import { routeThroughProxy } from '../../process/network/child-agents.js';

/** The proxy's socket, as the sandbox sees it. */
export const EGRESS_SOCKET_VARIABLE = 'TOOLHOST_EGRESS_SOCKET';
/** A PEM file the agents trust besides Node's roots (the secrets CA, tests' own CAs). */
export const EGRESS_TRUST_VARIABLE = 'TOOLHOST_EGRESS_TRUST';

const socketPath = process.env[EGRESS_SOCKET_VARIABLE];
if (socketPath !== undefined && socketPath !== '') {
  const trustFile = process.env[EGRESS_TRUST_VARIABLE];
  let trustCertificates: string | undefined;
  try {
    trustCertificates =
      trustFile === undefined || trustFile === '' ? undefined : readFileSync(trustFile, 'utf8');
  } catch {
    // Without it only Node's roots are trusted: a bound host's interception then fails its TLS check.
    trustCertificates = undefined;
  }
  routeThroughProxy({ socketPath, trustCertificates });
}
