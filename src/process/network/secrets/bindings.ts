/**
 * Secret bindings: what a package (or an MCP server entry) asks for by name, with the hosts the
 * secret is for (`"secrets": { "GITHUB_TOKEN": ["api.github.com"] }`). A binding names exact hosts
 * (a name or an address, an optional port), never a wildcard: the proxy makes a certificate for each
 * host it terminates TLS for, and a binding is only as narrow as its hosts. A host written
 * `http://host[:port]` also lets the value go over plain HTTP to it (for loopback tests); otherwise
 * plain HTTP to a bound host is refused. Each bound host must be one the same manifest asks the
 * network for: a binding can't widen what a package reaches.
 */
import type { NetworkAsk } from '../grant.js';
import { type NetRule, parseNetRule, parseNetRules, ruleMatches, rulePorts } from '../rules.js';

/** One binding as the manifest wrote it (checked). */
export interface SecretBinding {
  /** A valid environment variable name. */
  name: string;
  /** The hosts as written (`api.github.com`, `127.0.0.1:8443`, `http://127.0.0.1:8080`). */
  hosts: readonly string[];
}

/** One bound host, parsed. */
export interface BoundHost {
  rule: NetRule;
  /** Written `http://…`: the value may also go over plain HTTP to it. */
  plainHttp: boolean;
}

/** The most secrets one package may ask for, and the most hosts one binding may name. */
export const MAX_SECRET_BINDINGS = 64;
export const MAX_BOUND_HOSTS = 32;
/** A secret's name: what an environment variable may be called, at most 128 characters. */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Whether `name` can name a secret (an environment variable name). */
export function isSecretName(name: unknown): boolean {
  return typeof name === 'string' && SECRET_NAME.test(name);
}

/** One bound host as written, parsed; the reason otherwise. */
export function parseBoundHost(text: unknown): { ok: true; host: BoundHost } | { ok: false; reason: string } {
  const plainHttp = typeof text === 'string' && text.toLowerCase().startsWith('http://');
  const parsed = parseNetRule(plainHttp ? (text as string).slice('http://'.length) : text);
  if (!parsed.ok) return parsed;
  if (parsed.rule.wildcard) {
    return {
      ok: false,
      reason: `${JSON.stringify(text)} is a wildcard: a secret is bound to exact hosts`,
    };
  }
  return { ok: true, host: { rule: { ...parsed.rule, text: String(text) }, plainHttp } };
}

/**
 * `permissions.secrets` of a manifest (or of a server entry's `toolhost` object): undefined or `{}`
 * is none; otherwise each name must be a variable name and each list non-empty hosts that `net` asks
 * for. The reason is a sentence fragment that follows "where". `asker` names who binds them in
 * that reason (`the package`, `the server`).
 */
export function parseSecretBindings(
  value: unknown,
  net: NetworkAsk,
  asker = 'the package',
): { ok: true; bindings: readonly SecretBinding[] } | { ok: false; reason: string } {
  if (value === undefined) return { ok: true, bindings: [] };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: '"secrets" is not an object of secret names to lists of hosts' };
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_SECRET_BINDINGS) {
    return {
      ok: false,
      reason: `"secrets" names ${entries.length} secrets, more than ${MAX_SECRET_BINDINGS}`,
    };
  }
  const asked = Array.isArray(net) ? parseNetRules(net) : undefined;
  const bindings: SecretBinding[] = [];
  for (const [name, hosts] of entries) {
    if (!isSecretName(name)) {
      return {
        ok: false,
        reason: `${JSON.stringify(name.slice(0, 140))} is not a secret name (letters, digits and _, not starting with a digit, like an environment variable)`,
      };
    }
    if (!Array.isArray(hosts) || hosts.length === 0 || hosts.length > MAX_BOUND_HOSTS) {
      return {
        ok: false,
        reason: `secret ${name} is not bound to a list of 1 to ${MAX_BOUND_HOSTS} hosts`,
      };
    }
    for (const text of hosts) {
      const parsed = parseBoundHost(text);
      if (!parsed.ok) return { ok: false, reason: `secret ${name}'s host ${parsed.reason}` };
      const { rule } = parsed.host;
      const reachable =
        net === true || (asked?.ok === true && asked.rules.some((netRule) => boundHostWithin(rule, netRule)));
      if (!reachable) {
        return {
          ok: false,
          reason: `secret ${name} is bound to ${JSON.stringify(text)}, a host ${asker} does not ask the network for (add it to "net")`,
        };
      }
    }
    bindings.push(Object.freeze({ name, hosts: Object.freeze([...(hosts as string[])]) }));
  }
  return { ok: true, bindings: Object.freeze(bindings) };
}

/** Every host of a binding, parsed (they were checked when the manifest was read). */
export function boundHosts(binding: SecretBinding): BoundHost[] {
  const hosts: BoundHost[] = [];
  for (const text of binding.hosts) {
    const parsed = parseBoundHost(text);
    if (parsed.ok) hosts.push(parsed.host);
  }
  return hosts;
}

/** Whether a bound host (exact) falls under a network rule: every port it stands for, allowed. */
export function boundHostWithin(bound: NetRule, rule: NetRule): boolean {
  return rulePorts(bound).every((port) => ruleMatches(rule, bound.host, port));
}
