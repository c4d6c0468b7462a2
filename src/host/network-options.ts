/**
 * The host's network options, checked: `allowNetwork` (which packages get which hosts), the egress
 * proxy's bounds, and the test-only switches (names resolved from a table, certificates trusted).
 */
import { ToolHostError } from '../boundary/errors.js';
import type { NetworkAllowance } from '../process/network/grant.js';
import type { NetworkSettings } from '../process/network/network-settings.js';
import { parseNetRules } from '../process/network/rules.js';
import { expectPositiveInteger, show } from '../shared/expect.js';

export type { NetworkSettings };

/**
 * For tests only: the egress proxy resolves names from `hosts` instead of DNS (a name not in it does
 * not resolve), and the sandboxed workers' agents trust `trustCertificates` (PEM) besides Node's
 * roots. Never set it in production: it decides what a granted name reaches.
 */
export interface NetworkTestingOptions {
  hosts?: Readonly<Record<string, readonly string[]>>;
  trustCertificates?: string;
}

/** How long a tunnel may carry nothing before the proxy closes it. */
const NETWORK_IDLE_TIMEOUT_MS = 120_000;

export function networkSettings(options: {
  allowNetwork?: NetworkAllowance | undefined;
  maxNetworkConnections?: number | undefined;
  maxNetworkBytesPerConnection?: number | undefined;
  maxNetworkBytesPerCall?: number | undefined;
  networkTesting?: NetworkTestingOptions | undefined;
}): NetworkSettings {
  expectPositiveInteger('maxNetworkConnections', options.maxNetworkConnections);
  expectPositiveInteger('maxNetworkBytesPerConnection', options.maxNetworkBytesPerConnection);
  expectPositiveInteger('maxNetworkBytesPerCall', options.maxNetworkBytesPerCall);
  const testing = options.networkTesting;
  if (testing !== undefined && (typeof testing !== 'object' || testing === null)) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`networkTesting\` to be an object, got ${show(testing)}`,
    );
  }
  const hosts = testing?.hosts;
  if (
    hosts !== undefined &&
    !(
      typeof hosts === 'object' &&
      hosts !== null &&
      Object.values(hosts).every(
        (list) => Array.isArray(list) && list.every((item) => typeof item === 'string'),
      )
    )
  ) {
    throw new ToolHostError(
      'INVALID_OPTION',
      'Expected `networkTesting.hosts` to map host names to arrays of addresses',
    );
  }
  const trust = testing?.trustCertificates;
  if (trust !== undefined && typeof trust !== 'string') {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`networkTesting.trustCertificates\` to be PEM text, got ${show(trust)}`,
    );
  }
  return {
    allowNetwork: checkedAllowance(options.allowNetwork ?? false),
    maxConnections: options.maxNetworkConnections ?? 32,
    maxBytesPerConnection: options.maxNetworkBytesPerConnection ?? 256 * 1024 * 1024,
    maxBytesPerCall: options.maxNetworkBytesPerCall ?? 256 * 1024 * 1024,
    idleTimeoutMs: NETWORK_IDLE_TIMEOUT_MS,
    testHosts:
      hosts === undefined
        ? undefined
        : Object.fromEntries(Object.entries(hosts).map(([name, list]) => [name.toLowerCase(), [...list]])),
    trustCertificates: trust,
  };
}

function checkedAllowance(allowance: unknown): NetworkAllowance {
  if (typeof allowance === 'boolean') return allowance;
  if (Array.isArray(allowance)) {
    if (allowance.every((name) => typeof name === 'string' && name !== ''))
      return Object.freeze([...allowance]);
  } else if (typeof allowance === 'object' && allowance !== null) {
    const checked: Record<string, boolean | readonly string[]> = {};
    for (const [name, grant] of Object.entries(allowance)) {
      if (typeof grant === 'boolean') {
        checked[name] = grant;
        continue;
      }
      if (!Array.isArray(grant)) break;
      const rules = parseNetRules(grant);
      if (!rules.ok) {
        throw new ToolHostError(
          'INVALID_OPTION',
          `Expected \`allowNetwork\` of ${JSON.stringify(name)} to list hosts: ${rules.reason}`,
        );
      }
      checked[name] = Object.freeze([...(grant as string[])]);
    }
    if (Object.keys(checked).length === Object.keys(allowance).length) return Object.freeze(checked);
  }
  throw new ToolHostError(
    'INVALID_OPTION',
    `Expected \`allowNetwork\` to be a boolean, an array of package names, or an object of package names to true or lists of hosts, got ${show(allowance)}`,
  );
}
