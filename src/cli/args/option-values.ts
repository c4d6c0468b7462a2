/**
 * Reading parsed option values by the kind their flag declares (strings, lists, positive integers,
 * isolation tiers, paths, network grants, addresses), each mistake a {@link UsageError} naming the
 * option as it was typed.
 */
import { resolve } from 'node:path';
import { assertTierSupported, ISOLATION_TIERS, type IsolationTier } from '../../calls/isolation.js';
import { parseNetRules } from '../../process/network/rules.js';
import { isSecretName } from '../../process/network/secrets/bindings.js';
import { UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import type { HttpAddress } from './command-line.js';
import type { CommandName } from './command-names.js';
import type { Flag } from './flags.js';

/** What parseArgs gives for each option. */
export type Values = Record<string, string | boolean | Array<string | boolean> | undefined>;

/** A command line as parseArgs split it, with the options checked against the declaration. */
export interface Parsed {
  values: Values;
  positionals: string[];
  /** How the user typed an option (`-m` or `--model`), for messages that name it. */
  typed(name: string): string;
}

/** What `flag` holds on this command line; its fallback (or its variable) when it is absent. */
export function flagValue(
  flag: Flag,
  command: CommandName,
  parsed: Parsed,
  env: Readonly<Record<string, string | undefined>>,
): unknown {
  const { values } = parsed;
  const typed = parsed.typed(flag.name);
  let text = stringOption(values, flag.name);
  if (text === undefined && flag.env !== undefined) text = nonEmpty(env[flag.env]);
  text ??= flag.fallbackIn?.[command];
  switch (flag.kind) {
    case 'switch':
      return values[flag.name] === true;
    case 'texts':
      return stringList(values, flag.name);
    case 'grants':
      return networkAllowance(stringList(values, flag.name));
    case 'secrets':
      return secretValues(stringList(values, flag.name), env);
    case 'text':
      return text;
    case 'count':
      return positiveInteger(text, typed);
    case 'tier':
      return isolationTier(text, typed);
    case 'file':
      return lockPath(text);
    case 'address':
      return text === undefined ? undefined : httpAddress(text, typed);
  }
}

function isolationTier(value: string | undefined, typed: string): IsolationTier | undefined {
  if (value === undefined) return undefined;
  if (!(ISOLATION_TIERS as readonly string[]).includes(value)) {
    throw new UsageError(messages.unknownTier(typed, ISOLATION_TIERS, value));
  }
  const tier = value as IsolationTier;
  try {
    assertTierSupported(tier);
  } catch {
    throw new UsageError(messages.tierUnsupported(typed, process.version));
  }
  return tier;
}

export function stringOption(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function stringList(values: Values, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function positiveInteger(value: string | undefined, typed: string): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number <= 0) {
    throw new UsageError(messages.notPositiveInteger(typed, value));
  }
  return number;
}

/**
 * `--lock FILE` made absolute now: `serve` hands its arguments to a process of its own, and a path
 * means what it meant where it was typed.
 */
function lockPath(value: string | undefined): string | undefined {
  return value === undefined ? undefined : resolve(value);
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

export function atLeastOnePath(command: CommandName, positionals: string[]): string[] {
  if (positionals.length === 0) throw new UsageError(messages.missingPaths(command));
  return positionals;
}

/**
 * `--allow-network PACKAGE` (what it asks) or `--allow-network PACKAGE=HOST,HOST` (of what it asks,
 * only these), repeatable; a later one for the same package replaces an earlier one.
 */
function networkAllowance(entries: string[]): Record<string, true | string[]> | undefined {
  if (entries.length === 0) return undefined;
  const allowance: Record<string, true | string[]> = {};
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    const name = equals < 0 ? entry : entry.slice(0, equals);
    if (name === '') throw new UsageError(messages.badNetworkGrant(entry, 'it names no package'));
    if (equals < 0) {
      allowance[name] = true;
      continue;
    }
    const hosts = entry
      .slice(equals + 1)
      .split(',')
      .map((host) => host.trim());
    const rules = parseNetRules(hosts);
    if (!rules.ok) throw new UsageError(messages.badNetworkGrant(entry, rules.reason));
    allowance[name] = hosts;
  }
  return allowance;
}

/**
 * `--secret NAME` (the value of the environment variable NAME) or `--secret NAME=VAR` (VAR's),
 * repeatable; read now, so a missing variable is said before anything loads.
 */
function secretValues(
  entries: string[],
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> | undefined {
  if (entries.length === 0) return undefined;
  const values: Record<string, string> = {};
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    const name = equals < 0 ? entry : entry.slice(0, equals);
    const variable = equals < 0 ? entry : entry.slice(equals + 1);
    if (!isSecretName(name) || !isSecretName(variable)) {
      throw new UsageError(
        messages.badSecret(entry, 'NAME and VAR are environment variable names (letters, digits and _)'),
      );
    }
    const value = env[variable];
    if (value === undefined || value === '') {
      throw new UsageError(
        messages.badSecret(
          entry,
          `the environment variable ${variable} is ${value === undefined ? 'not set' : 'empty'}; set it, or name another with --secret ${name}=VAR`,
        ),
      );
    }
    values[name] = value;
  }
  return values;
}

/** `8080`, `127.0.0.1:0`, `[::1]:8080`, `0.0.0.0:8080`, `localhost:3000`. */
function httpAddress(value: string, typed: string): HttpAddress {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    throw new UsageError(messages.notHttpAddress(typed, value));
  }
  const host = match[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1';
  return { host, port };
}
