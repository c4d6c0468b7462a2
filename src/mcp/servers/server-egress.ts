/**
 * An MCP server's way out of its sandbox: its entry's `net` hosts and secret bindings, through an
 * egress proxy of its own (process/network/egress.ts, one per running server as one per package
 * version), reached through the proxy's Unix socket, bound into the sandbox. The sandbox has no
 * network but that socket.
 * - A Node server (its command, or the interpreter its script names, is `node`) loads the agents
 *   package processes use before its own code (`NODE_OPTIONS=--import`, egress-preload.ts).
 * - Any other program is started behind egress-bridge.ts, which listens on a loopback port inside
 *   the sandbox and sets `HTTP_PROXY`/`HTTPS_PROXY` (and the lower-case forms, `NO_PROXY` empty) to it.
 * - Each bound secret's variable holds its placeholder; the CA the proxy presents bound hosts'
 *   certificates from is trusted through `NODE_EXTRA_CA_CERTS`, and with the usual roots through
 *   `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE` and `CURL_CA_BUNDLE`.
 */
import { existsSync, realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { srcFile } from '../../own-files.js';
import { type EgressSettings, PackageEgress } from '../../process/network/egress.js';
import type { NetworkGrant } from '../../process/network/grant.js';
import { parseNetRules } from '../../process/network/rules.js';
import { grantedSecrets } from '../../process/network/secrets/granted-secrets.js';
import { codePaths } from '../../process/sandbox/sandbox.js';
import type { ServerEntry } from './config.js';
import { EGRESS_SOCKET_VARIABLE, EGRESS_TRUST_VARIABLE } from './egress-preload.js';
import type { ServerPlan } from './server-sandbox.js';

const PRELOAD = srcFile('mcp/servers/egress-preload.js');
const BRIDGE = srcFile('mcp/servers/egress-bridge.js');
/** Where programs that are not Node find the system's trusted roots (each only if it exists). */
const TRUST_FOLDERS = ['/etc/ssl', '/etc/ca-certificates', '/etc/pki'];
/** The bridge's heap: it pipes, never holds. */
const BRIDGE_HEAP_MB = 32;

/** What an entry's egress adds to its start: the plan it runs, and its environment. */
export interface EgressLaunch {
  plan: ServerPlan;
  env: Record<string, string>;
}

/** The network an entry's `net` grants (the config is the host user's own: it is the grant). */
export function serverGrant(entry: Pick<ServerEntry, 'net' | 'secrets'>): NetworkGrant {
  const { net } = entry;
  if (net === false || (Array.isArray(net) && net.length === 0)) return { kind: 'none', why: 'not-asked' };
  if (net === true) {
    // The whole network, with a secret, still goes through the proxy's rules: it holds the value.
    return entry.secrets.length > 0
      ? { kind: 'hosts', asked: undefined, granted: undefined }
      : { kind: 'all' };
  }
  const rules = parseNetRules(net);
  // Checked when the config was read: a bad entry can't be here.
  return { kind: 'hosts', asked: rules.ok ? rules.rules : [], granted: undefined };
}

/** The egress of an entry that asks for the network; undefined for one that doesn't. */
export function serverEgress(
  entry: ServerEntry,
  settings: { egress: EgressSettings; secretValues: Readonly<Record<string, string>>; tmpRoot: string },
): PackageEgress | undefined {
  const grant = serverGrant(entry);
  if (grant.kind === 'none') return undefined;
  const secrets = grantedSecrets({
    packageName: entry.name,
    bindings: entry.secrets,
    values: settings.secretValues,
    grant,
  });
  return new PackageEgress(
    {
      packageName: entry.name,
      source: entry.config,
      grant,
      tmpRoot: settings.tmpRoot,
      // Every bound host is under `net` (the config was refused otherwise), so this holds.
      secrets: secrets.ok ? secrets.secrets : [],
      alwaysOpen: true,
      subject: `MCP server ${entry.name}`,
    },
    settings.egress,
  );
}

/** Opens the egress and gives the plan and variables that route the server through it. */
export async function launchThroughEgress(
  egress: PackageEgress,
  plan: ServerPlan,
  existingNodeOptions: string | undefined,
): Promise<EgressLaunch> {
  const door = await egress.open();
  const env: Record<string, string> = { ...door.env };
  const { socketPath, trustCertificates } = door.route;
  if (env['SSL_CERT_FILE'] !== undefined) {
    env['REQUESTS_CA_BUNDLE'] = env['SSL_CERT_FILE'];
    env['CURL_CA_BUNDLE'] = env['SSL_CERT_FILE'];
  }
  // The system's roots, read-only: TLS to a host reached through the proxy is checked in the sandbox.
  const trust = TRUST_FOLDERS.filter((folder) => existsSync(folder));
  const paths = { ...plan.paths, readOnly: [...plan.paths.readOnly, ...trust], egress: door.folder };
  if (plan.node) {
    env[EGRESS_SOCKET_VARIABLE] = socketPath;
    if (trustCertificates !== undefined) {
      const trustFile = join(door.folder, 'agents-trust.pem');
      await writeFile(trustFile, trustCertificates, { mode: 0o644 });
      env[EGRESS_TRUST_VARIABLE] = trustFile;
    }
    // After what the config sets: the server's own options stay.
    env['NODE_OPTIONS'] = [existingNodeOptions, `--import=${PRELOAD.href}`].filter(Boolean).join(' ');
    return { plan: { ...plan, paths: { ...paths, code: [...(paths.code ?? []), ...codePaths()] } }, env };
  }
  // Node runs the bridge: toolhost's own code and Node itself, read-only, as in a package's sandbox.
  const node = realpathSync(process.execPath);
  return {
    plan: {
      ...plan,
      command: node,
      args: [
        `--max-old-space-size=${BRIDGE_HEAP_MB}`,
        fileURLToPath(BRIDGE),
        socketPath,
        plan.command,
        ...plan.args,
      ],
      paths: { ...paths, code: [...(paths.code ?? []), ...codePaths()] },
    },
    env,
  };
}
