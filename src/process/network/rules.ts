/**
 * Network rules: what a package's manifest asks for and what a host grants, as `host[:port]`
 * entries (`api.weather.gov`, `*.example.com:443`, `10.0.0.5:8080`, `[fd00::1]:443`). A rule is
 * parsed once, when its manifest or the host's options are read, so a mistake is said where it was
 * made; matching is then exact, lower-case and ASCII only (a Unicode name must be given as its
 * `xn--` form, so two names that look alike can't both match one rule).
 */

import { canonicalAddress } from './addresses.js';
import { isIP } from './ip-family.js';

export interface NetRule {
  /** Lower-case host name (without the `*.`), or an IP address (IPv6 without brackets). */
  host: string;
  /** `*.example.com`: any name under `example.com`, not `example.com` itself. */
  wildcard: boolean;
  /** The rule names an address, not a name: it also vouches for names that resolve to it. */
  address: boolean;
  /** Only this port; without one, 80 and 443 (what `http:` and `https:` URLs use). */
  port: number | undefined;
  /** The rule as written, for messages. */
  text: string;
}

/** The ports a rule without one allows. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** Longest rule accepted: a DNS name is at most 253 characters, plus a port. */
const MAX_RULE_LENGTH = 300;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** One rule, or the reason it is not one (a sentence fragment: "`x` is …"). */
export function parseNetRule(text: unknown): { ok: true; rule: NetRule } | { ok: false; reason: string } {
  if (typeof text !== 'string') return { ok: false, reason: `${describe(text)} is not a string` };
  if (text.length === 0 || text.length > MAX_RULE_LENGTH) {
    return { ok: false, reason: `${JSON.stringify(text.slice(0, 40))} is not a host name` };
  }
  const shown = JSON.stringify(text);
  let rest = text.toLowerCase();
  let port: number | undefined;
  let host: string;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return { ok: false, reason: `${shown} has no closing ]` };
    host = rest.slice(1, close);
    rest = rest.slice(close + 1);
    if (isIP(host) !== 6) return { ok: false, reason: `${shown} is not an IPv6 address in brackets` };
    if (rest !== '' && !rest.startsWith(':')) return { ok: false, reason: `${shown} is not host[:port]` };
    rest = rest.slice(1);
    if (rest !== '' || text.endsWith(':')) {
      port = parsePort(rest);
      if (port === undefined) return { ok: false, reason: `${shown} has a port that is not 1 to 65535` };
    }
  } else if (isIP(rest) === 6) {
    host = rest;
  } else {
    const colon = rest.lastIndexOf(':');
    if (colon >= 0) {
      port = parsePort(rest.slice(colon + 1));
      if (port === undefined) return { ok: false, reason: `${shown} has a port that is not 1 to 65535` };
      rest = rest.slice(0, colon);
    }
    host = rest.endsWith('.') ? rest.slice(0, -1) : rest;
  }
  const address = canonicalAddress(host);
  if (address !== undefined)
    return { ok: true, rule: { host: address, wildcard: false, address: true, port, text } };
  const wildcard = host.startsWith('*.');
  if (wildcard) host = host.slice(2);
  const labels = host.split('.');
  if (host.length > 253 || !labels.every((label) => LABEL.test(label))) {
    return {
      ok: false,
      reason: `${shown} is not a host name (ASCII letters, digits, - and .; *. only first)`,
    };
  }
  // `*.com` would be a whole top-level domain.
  if (wildcard && labels.length < 2)
    return { ok: false, reason: `${shown} is a wildcard over a top-level domain` };
  return { ok: true, rule: { host, wildcard, address: false, port, text } };
}

/** A list of rules; the first bad entry's reason otherwise. */
export function parseNetRules(
  entries: readonly unknown[],
): { ok: true; rules: NetRule[] } | { ok: false; reason: string } {
  const rules: NetRule[] = [];
  for (const entry of entries) {
    const parsed = parseNetRule(entry);
    if (!parsed.ok) return parsed;
    rules.push(parsed.rule);
  }
  return { ok: true, rules };
}

/** Whether `rule` allows `host` (lower-case, as {@link normalHost} gives it) on `port`. */
export function ruleMatches(rule: NetRule, host: string, port: number): boolean {
  if (rule.port === undefined ? !DEFAULT_PORTS.includes(port) : rule.port !== port) return false;
  return rule.wildcard ? host.endsWith(`.${rule.host}`) : host === rule.host;
}

/** The ports a rule stands for: its own, or without one {@link DEFAULT_PORTS}. */
export function rulePorts(rule: NetRule): readonly number[] {
  return rule.port === undefined ? DEFAULT_PORTS : [rule.port];
}

/**
 * A requested host as rules see it: lower-case, without a trailing dot or IPv6 brackets; undefined
 * for what is neither a host name nor an address (a rule can never match it).
 */
export function normalHost(requested: string): string | undefined {
  let host = requested.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  const address = canonicalAddress(host);
  if (address !== undefined) return address;
  if (host.length === 0 || host.length > 253) return undefined;
  return host.split('.').every((label) => LABEL.test(label)) ? host : undefined;
}

/** `host:port` as a message shows it (`[::1]:443` for IPv6). */
export function hostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

function parsePort(text: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65_535 ? port : undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  return typeof value === 'object' ? (Array.isArray(value) ? 'an array' : 'an object') : String(value);
}
