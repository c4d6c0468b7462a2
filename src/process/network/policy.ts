/**
 * The egress proxy's decision for one requested `host:port`: is it granted, what does the name
 * resolve to, and is that address one the proxy may connect to. The proxy then connects to exactly
 * the address decided here (never resolving again), so a name that answers a public address to the
 * check and a private one to the connection (DNS rebinding) gets nowhere.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { canonicalAddress, refusedAddress } from './addresses.js';
import { grantAllows, type NetworkGrant, namedAddresses } from './grant.js';
import { DEFAULT_PORTS, hostPort, normalHost } from './rules.js';

export interface PolicySettings {
  packageName: string;
  /** Who the grant is of, as messages name it: `package <packageName>` unless given (`MCP server fs`). */
  subject?: string | undefined;
  grant: NetworkGrant;
  /** The host's own addresses, canonical. */
  ownAddresses: ReadonlySet<string>;
  /** Names and their addresses used instead of DNS (tests only); a name not in it does not resolve. */
  testHosts: Readonly<Record<string, readonly string[]>> | undefined;
}

export type Decision =
  | { allowed: true; host: string; port: number; address: string }
  | { allowed: false; host: string; port: number; reason: string };

/** How long a name may take to resolve. */
const LOOKUP_BOUND_MS = 10_000;

/** The decision for a request to `requestedHost` on `port` (the host as the client sent it). */
export async function decide(
  settings: PolicySettings,
  requestedHost: string,
  port: number,
): Promise<Decision> {
  const host = normalHost(requestedHost);
  const shown = host ?? requestedHost.slice(0, 256);
  const refuse = (reason: string): Decision => ({ allowed: false, host: shown, port, reason });
  if (host === undefined) return refuse('not a host name or address');
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return refuse('not a port');
  if (!grantAllows(settings.grant, host, port)) return refuse(`not granted to ${subjectOf(settings)}`);
  let addresses: string[];
  try {
    addresses = await resolve(settings, host);
  } catch (error) {
    return refuse(`${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? 'no answer'})`);
  }
  if (addresses.length === 0) return refuse(`${host} could not be resolved (no address)`);
  const vouched = new Set(
    namedAddresses(settings.grant)
      .filter((rule) => (rule.port === undefined ? DEFAULT_PORTS.includes(port) : rule.port === port))
      .map((rule) => canonicalAddress(rule.host)),
  );
  let firstRefusal: string | undefined;
  for (const address of addresses) {
    const canonical = canonicalAddress(address);
    if (canonical === undefined) continue;
    const refused = refusedAddress(address, settings.ownAddresses);
    if (refused === undefined || vouched.has(canonical)) return { allowed: true, host, port, address };
    firstRefusal ??=
      isIP(host) !== 0
        ? `${refused}, which ${subjectOf(settings)}'s grant does not name`
        : `${host} resolves to ${address}, ${refused}, which ${subjectOf(settings)}'s grant does not name`;
  }
  return refuse(firstRefusal ?? `${host} resolves to no usable address`);
}

/** Who a grant is of, as messages name it: `package weather-tools`, `MCP server fs`. */
export function subjectOf(settings: Pick<PolicySettings, 'packageName' | 'subject'>): string {
  return settings.subject ?? `package ${settings.packageName}`;
}

/** The message a refused client reads: the tool error the model sees. */
export function refusalMessage(decision: { host: string; port: number; reason: string }): string {
  return `the process isolation tier refused network access to ${hostPort(decision.host, decision.port)} (${decision.reason})`;
}

async function resolve(settings: PolicySettings, host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  if (settings.testHosts !== undefined) {
    const listed = Object.hasOwn(settings.testHosts, host) ? settings.testHosts[host] : undefined;
    if (listed === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return [...listed];
  }
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error('timed out'), { code: 'ETIMEOUT' })),
      LOOKUP_BOUND_MS,
    );
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), bound]);
    return found.map((entry) => entry.address);
  } finally {
    clearTimeout(timer);
  }
}
