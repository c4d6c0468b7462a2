/**
 * Reading parsed option values: strings, lists, positive integers and isolation tiers, each mistake
 * a {@link UsageError} naming the option as it was typed.
 */
import { resolve } from 'node:path';
import { assertTierSupported, ISOLATION_TIERS, type IsolationTier } from '../../calls/isolation.js';
import { parseNetRules } from '../../process/network/rules.js';
import { UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import type { CommandName } from './args.js';

/** What parseArgs gives for each option. */
export type Values = Record<string, string | boolean | Array<string | boolean> | undefined>;

export function isolationTier(value: string | undefined, typed: string): IsolationTier | undefined {
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

export function positiveIntegerOption(values: Values, name: string, typed: string): number | undefined {
  const value = stringOption(values, name);
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
export function lockPath(value: string | undefined): string | undefined {
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
export function networkAllowance(entries: string[]): Record<string, true | string[]> {
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
