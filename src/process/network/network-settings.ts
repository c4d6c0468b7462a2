/** What the egress proxies read of the host's settings (checked in host/network-options.ts). */
import type { EgressSettings } from './egress.js';
import type { NetworkAllowance } from './grant.js';

export interface NetworkSettings {
  allowNetwork: NetworkAllowance;
  maxConnections: number;
  maxBytesPerConnection: number;
  maxBytesPerCall: number;
  idleTimeoutMs: number;
  /** For tests only: names resolved from this table instead of DNS. */
  testHosts: Record<string, string[]> | undefined;
  /** For tests only: PEM certificates the sandboxed processes' agents trust besides Node's roots. */
  trustCertificates: string | undefined;
}

/** What every egress proxy of the host shares (see {@link EgressSettings}), from its network settings. */
export function egressSettings(
  network: NetworkSettings,
  onNetwork: EgressSettings['onNetwork'],
): EgressSettings {
  return {
    limits: {
      maxConnections: network.maxConnections,
      maxBytesPerConnection: network.maxBytesPerConnection,
      maxBytesPerCall: network.maxBytesPerCall,
      idleTimeoutMs: network.idleTimeoutMs,
    },
    testHosts: network.testHosts,
    trustCertificates: network.trustCertificates,
    onNetwork,
  };
}
