/**
 * What network a package gets: what its manifest asks for (`"net": true`, or a list of hosts),
 * narrowed by what the host's `allowNetwork` grants it. A connection is allowed only when a rule of
 * each allows it; what either side leaves out is denied. `true` on both sides is the whole network,
 * as before lists existed.
 */
import { DEFAULT_PORTS, type NetRule, parseNetRules, ruleMatches } from './rules.js';

/**
 * The host's `allowNetwork` option: every package that asks (`true`), none (`false`), the named
 * packages (what they ask), or per package name `true` (what it asks) or a list of rules it may have
 * of what it asks.
 */
export type NetworkAllowance =
  | boolean
  | readonly string[]
  | Readonly<Record<string, boolean | readonly string[]>>;

/** What a package's manifest asks for: nothing, everything, or these hosts. */
export type NetworkAsk = boolean | readonly string[];

export type NetworkGrant =
  | { kind: 'none'; why: 'not-asked' | 'not-granted' }
  | { kind: 'all' }
  | {
      kind: 'hosts';
      /** The manifest's rules, or undefined when it asks for everything (`true`). */
      asked: readonly NetRule[] | undefined;
      /** The host's rules, or undefined when it grants what is asked. */
      granted: readonly NetRule[] | undefined;
    };

export const NO_NETWORK: NetworkGrant = Object.freeze({ kind: 'none', why: 'not-asked' });

/** The network one package gets. A single module file has no name, asks for nothing and gets none. */
export function networkGrant(
  allowance: NetworkAllowance,
  source: { packageName: string | undefined; permissions: { net: NetworkAsk } },
): NetworkGrant {
  const ask = source.permissions.net;
  if (ask === false || (Array.isArray(ask) && ask.length === 0)) return NO_NETWORK;
  const given = grantFor(allowance, source.packageName);
  if (given === false || (Array.isArray(given) && given.length === 0)) {
    return { kind: 'none', why: 'not-granted' };
  }
  const asked = ask === true ? undefined : rulesOf(ask as readonly string[]);
  const granted = given === true ? undefined : rulesOf(given as readonly string[]);
  return asked === undefined && granted === undefined ? { kind: 'all' } : { kind: 'hosts', asked, granted };
}

/** Whether a grant allows `host` (normalised) on `port`: a rule of each side must. */
export function grantAllows(grant: NetworkGrant, host: string, port: number): boolean {
  if (grant.kind !== 'hosts') return grant.kind === 'all';
  const allows = (rules: readonly NetRule[] | undefined) =>
    rules === undefined || rules.some((rule) => ruleMatches(rule, host, port));
  return allows(grant.asked) && allows(grant.granted);
}

/** The address rules both sides hold: they vouch for a name that resolves to a refused address. */
export function namedAddresses(grant: NetworkGrant): NetRule[] {
  if (grant.kind !== 'hosts') return [];
  const addresses = (rules: readonly NetRule[] | undefined) => (rules ?? []).filter((rule) => rule.address);
  if (grant.asked === undefined) return addresses(grant.granted);
  if (grant.granted === undefined) return addresses(grant.asked);
  const granted = addresses(grant.granted);
  return addresses(grant.asked).filter((rule) =>
    granted.some((other) => other.host === rule.host && (other.port ?? 0) === (rule.port ?? 0)),
  );
}

/**
 * The rules a `hosts` grant comes to, as written on either side: each rule of one side that a rule
 * of the other covers (`*.example.com` covers `a.example.com:443`; `api.weather.gov` covers
 * `api.weather.gov:443`).
 */
export function grantedRules(grant: NetworkGrant): string[] {
  if (grant.kind !== 'hosts') return [];
  if (grant.asked === undefined) return (grant.granted ?? []).map((rule) => rule.text);
  if (grant.granted === undefined) return grant.asked.map((rule) => rule.text);
  const { asked, granted } = grant;
  const texts = [
    ...asked.filter((rule) => granted.some((other) => covers(other, rule))),
    ...granted.filter(
      (rule) => asked.some((other) => covers(other, rule)) && !asked.some((other) => covers(rule, other)),
    ),
  ].map((rule) => rule.text);
  return [...new Set(texts)];
}

/** A grant as a load report gives it: `false` (none), `true` (all) or the rules it comes to. */
export function grantedNetwork(grant: NetworkGrant): boolean | string[] {
  return grant.kind === 'hosts' ? grantedRules(grant) : grant.kind === 'all';
}

/** The grant in words, for `toolhost list` and the host's notices: `api.weather.gov, *.example.com:443`. */
export function describeGrant(grant: NetworkGrant): string {
  if (grant.kind === 'none') return 'no network';
  if (grant.kind === 'all') return 'the whole network';
  const rules = grantedRules(grant);
  return rules.length === 0 ? 'no host' : rules.join(', ');
}

/** Whether every host and port `inner` allows, `outer` allows too. */
function covers(outer: NetRule, inner: NetRule): boolean {
  const ports =
    outer.port === undefined
      ? inner.port === undefined || DEFAULT_PORTS.includes(inner.port)
      : inner.port === outer.port;
  if (!ports) return false;
  if (!outer.wildcard) return !inner.wildcard && inner.host === outer.host;
  return inner.host.endsWith(`.${outer.host}`) || (inner.wildcard && inner.host === outer.host);
}

/** What a manifest asks for, as it says it: `"permissions": { "net": true }`. */
export function askedText(ask: NetworkAsk): string {
  return `"permissions": { "net": ${JSON.stringify(ask)} }`;
}

function grantFor(allowance: NetworkAllowance, name: string | undefined): boolean | readonly string[] {
  if (typeof allowance === 'boolean') return allowance;
  if (name === undefined) return false;
  if (Array.isArray(allowance)) return allowance.includes(name);
  const record = allowance as Readonly<Record<string, boolean | readonly string[]>>;
  return Object.hasOwn(record, name) ? (record[name] ?? false) : false;
}

function rulesOf(entries: readonly string[]): NetRule[] {
  const parsed = parseNetRules(entries);
  // Both sides were checked when they were read (the manifest, the options): a bad entry can't be here.
  return parsed.ok ? parsed.rules : [];
}
