/**
 * What a package's egress proxy knows of its secrets: each one's value and placeholder, the hosts
 * it is bound to, the certificates it presents for those hosts, and how it checks the real ones.
 * From these, per request: which secrets a host is bound to, what is swapped in a request to it,
 * what is swapped back out of its answer, and which placeholders are only noticed (a placeholder
 * sent where its secret isn't bound goes on unreplaced, and is reported).
 */
import { ruleMatches } from '../rules.js';
import type { BoundHost } from './bindings.js';
import type { Needle } from './replace.js';

/** One secret as the proxy holds it (host-side code only). */
export interface ProxySecret {
  name: string;
  value: string;
  placeholder: string;
  hosts: BoundHost[];
}

export interface ProxySecrets {
  secrets: ProxySecret[];
  /** Per bound host name (normalised): the key and certificate (PEM) presented for it. */
  certificates: Record<string, { key: string; certificate: string }>;
  /**
   * The certificates a real upstream is checked against, or undefined for Node's own store (its
   * roots and NODE_EXTRA_CA_CERTS).
   */
  upstreamCa: string[] | undefined;
}

/** The secrets bound to `host` on `port` (host normalised), and whether each may go over plain HTTP. */
export function boundAt(
  proxySecrets: ProxySecrets | undefined,
  host: string,
  port: number,
): Array<{ secret: ProxySecret; plainHttp: boolean }> {
  if (proxySecrets === undefined) return [];
  const bound: Array<{ secret: ProxySecret; plainHttp: boolean }> = [];
  for (const secret of proxySecrets.secrets) {
    // A bound host is exact (never a wildcard): a rule's match is the host's.
    const at = secret.hosts.find(({ rule }) => ruleMatches(rule, host, port));
    if (at !== undefined) bound.push({ secret, plainHttp: at.plainHttp });
  }
  return bound;
}

/**
 * The needles of a request to a host: the bound secrets' placeholders become their values; every
 * other secret's placeholder is only noticed.
 */
export function requestNeedles(
  proxySecrets: ProxySecrets | undefined,
  bound: readonly ProxySecret[],
): Needle[] {
  return (proxySecrets?.secrets ?? []).map((secret) => ({
    find: secret.placeholder,
    replace: bound.includes(secret) ? secret.value : undefined,
    name: secret.name,
  }));
}

/** Only noticing every placeholder (a request where nothing is swapped in). */
export function noticeNeedles(proxySecrets: ProxySecrets | undefined): Needle[] {
  return requestNeedles(proxySecrets, []);
}

/**
 * The needles of an answer: every value goes back to its placeholder before it enters the sandbox,
 * in each form the proxy itself sends it in ({@link sentForms}).
 */
export function answerNeedles(proxySecrets: ProxySecrets | undefined): Needle[] {
  return (proxySecrets?.secrets ?? []).flatMap((secret) =>
    sentForms(secret.value).map((form) => ({ find: form, replace: secret.placeholder, name: secret.name })),
  );
}

/**
 * Every form a value leaves the proxy in, so an answer that echoes any of them is caught: as it is
 * (headers), and percent-encoded as the query gets it (`encodeURIComponent`, upper-case hex) and
 * with lower-case hex, as a server that encodes it again writes it. Values are printable ASCII
 * (granted-secrets.ts), so these are all the bytes the proxy can send a value as.
 */
export function sentForms(value: string): string[] {
  const encoded = encodeURIComponent(value);
  const lowerHex = encoded.replace(/%[0-9A-F]{2}/g, (percentEscape) => percentEscape.toLowerCase());
  return [...new Set([value, encoded, lowerHex])];
}

/** The reason a `network` event gives for a placeholder sent where its secret isn't bound. */
export function strayPlaceholderReason(name: string, where: string, hostPortText: string): string {
  return `the placeholder of secret ${name} was sent to ${hostPortText} in ${where}, where it is not bound: it went unreplaced`;
}
