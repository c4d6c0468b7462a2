/**
 * The host's side of secrets: the values it grants (the `secrets` option, `--secret NAME[=VAR]`),
 * checked once, and per package the secrets it gets: those its manifest binds that the host grants
 * a value, each bound host one its network grant reaches. A secret the host doesn't grant is simply
 * absent; a granted one bound to a host the package may not reach leaves the package out, with the
 * reason (never a binding silently narrowed).
 */

import { ToolHostError } from '../../../boundary/errors.js';
import { show } from '../../../shared/expect.js';
import { grantAllows, type NetworkGrant } from '../grant.js';
import { rulePorts } from '../rules.js';
import { type BoundHost, boundHosts, isSecretName, type SecretBinding } from './bindings.js';
import { secretsUnsupported } from './node-http-parser.js';

/** A secret a package gets: its value, and the hosts it may go to. Host-side only, never a tool's. */
export interface GrantedSecret {
  name: string;
  value: string;
  hosts: BoundHost[];
}

/** The longest value a secret may have (a header's worth). */
export const MAX_SECRET_VALUE_CHARS = 8 * 1024;

/**
 * Checks the `secrets` option: names as environment variables, values non-empty text without
 * control characters (a value goes into request headers, where a line break would start another).
 */
export function checkedSecretValues(option: unknown): Readonly<Record<string, string>> {
  if (option === undefined) return Object.freeze({});
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`secrets\` to be an object of secret names to values, got ${show(option)}`,
    );
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(option)) {
    if (!isSecretName(name)) {
      throw new ToolHostError(
        'INVALID_OPTION',
        `Expected \`secrets\` to name secrets as environment variables (letters, digits and _, not starting with a digit), got ${JSON.stringify(name.slice(0, 140))}`,
      );
    }
    if (typeof value !== 'string' || value === '') {
      throw new ToolHostError(
        'INVALID_OPTION',
        `Expected \`secrets\` of ${name} to be a non-empty string, got ${typeof value === 'string' ? 'an empty string' : show(value)}`,
      );
    }
    if (value.length > MAX_SECRET_VALUE_CHARS || isNotPrintableAscii(value)) {
      throw new ToolHostError(
        'INVALID_OPTION',
        `Expected \`secrets\` of ${name} to be at most ${MAX_SECRET_VALUE_CHARS} printable ASCII characters (no line breaks, NUL, tabs or characters past ~: it goes into request headers as it is)`,
      );
    }
    values[name] = value;
  }
  return Object.freeze(values);
}

function isNotPrintableAscii(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code > 0x7e) return true;
  }
  return false;
}

/** The bindings the host grants a value, with their values; the rest are absent. */
export function grantedBindings(
  bindings: readonly SecretBinding[],
  values: Readonly<Record<string, string>>,
): Array<{ binding: SecretBinding; value: string }> {
  return bindings.flatMap((binding) =>
    Object.hasOwn(values, binding.name) ? [{ binding, value: values[binding.name] as string }] : [],
  );
}

/**
 * What a package gets of its bindings under its network grant, or why it can't be offered: a
 * granted secret bound to a host the grant does not reach.
 */
export function grantedSecrets(options: {
  packageName: string;
  bindings: readonly SecretBinding[];
  values: Readonly<Record<string, string>>;
  grant: NetworkGrant;
}): { ok: true; secrets: GrantedSecret[] } | { ok: false; reason: string } {
  const granted = grantedBindings(options.bindings, options.values);
  const unsupported = granted.length === 0 ? undefined : secretsUnsupported();
  if (unsupported !== undefined) return { ok: false, reason: unsupported };
  const secrets: GrantedSecret[] = [];
  for (const { binding, value } of granted) {
    const hosts = boundHosts(binding);
    for (const { rule } of hosts) {
      if (!rulePorts(rule).every((port) => grantAllows(options.grant, rule.host, port))) {
        return {
          ok: false,
          reason: `secret ${binding.name} is bound to ${rule.text}, which \`allowNetwork\` does not grant package ${options.packageName}; grant it (--allow-network ${options.packageName}), or don't grant the secret`,
        };
      }
    }
    secrets.push({ name: binding.name, value, hosts });
  }
  return { ok: true, secrets };
}

/**
 * Why a package's version can't be offered for its secrets, or undefined: in a thread tier unless
 * the host hands values there (`exposeSecretValuesToThreadTiers`), in the process tier without an OS
 * sandbox (its processes under Node's permission model), or a granted secret bound to a host its
 * grant does not reach.
 */
export function secretsRefusal(
  version: {
    packageName: string | undefined;
    root: string;
    isolation: string;
    permissions: { secrets?: readonly SecretBinding[] | undefined };
  },
  settings: {
    secretValues: Readonly<Record<string, string>>;
    exposeSecretValuesToThreadTiers: boolean;
    grant: NetworkGrant;
    /** The process tier runs without an OS sandbox here, under Node's permission model. */
    confinedByPermissions: boolean;
  },
): string | undefined {
  const granted = grantedBindings(version.permissions.secrets ?? [], settings.secretValues);
  if (granted.length === 0) return undefined;
  const packageName = version.packageName ?? version.root;
  if (version.isolation !== 'process') {
    if (settings.exposeSecretValuesToThreadTiers) return undefined;
    const names = granted.map(({ binding }) => binding.name).join(', ');
    return `package ${packageName} binds secrets (${names}), which only the process isolation tier keeps from its tools: load it with isolation 'process' (--isolation process), or set \`exposeSecretValuesToThreadTiers\` to hand its tools the values themselves`;
  }
  if (settings.confinedByPermissions) {
    // Its processes run under Node's permission model there, which refuses them the proxy's socket.
    return `package ${packageName} binds secrets, which the process isolation tier swaps in through its egress proxy only inside an OS sandbox (bubblewrap), and there is none here; see docs/isolation.md`;
  }
  const result = grantedSecrets({
    packageName,
    bindings: version.permissions.secrets ?? [],
    values: settings.secretValues,
    grant: settings.grant,
  });
  return result.ok ? undefined : result.reason;
}

/** The values a thread-tier package's tools see when the host hands them there. */
export function exposedSecretValues(
  bindings: readonly SecretBinding[] | undefined,
  values: Readonly<Record<string, string>>,
): Record<string, string> {
  return Object.fromEntries(
    grantedBindings(bindings ?? [], values).map(({ binding, value }) => [binding.name, value]),
  );
}
