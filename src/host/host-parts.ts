/**
 * How the host's parts work together, apart from the facade: what loading a source needs from its
 * host (the registry, the snapshots, the declaration reader, and the host's answers about a version:
 * its workers' flags, what it may read, its secrets and network, its MCP servers' settings and
 * places), and what happens to versions a newer one replaced.
 */
import type { DomainPools } from '../calls/domain-pools.js';
import type { DeclarationReader } from '../declaration/reader.js';
import { type PinReport, pinModules } from '../lock/pin.js';
import { grantedNetwork, networkGrant } from '../process/network/grant.js';
import { secretsRefusal } from '../process/network/secrets/granted-secrets.js';
import type { SourceVersion } from '../registry/generation.js';
import type { Registry } from '../registry/registry.js';
import type { Snapshots } from '../snapshot/snapshot.js';
import { type LoadingParts, letGo } from '../sources/load.js';
import type { NetworkCounts } from './network-counts.js';
import { serverSettings } from './server-settings.js';
import type { Settings } from './settings.js';

export interface HostParts {
  settings: Settings;
  registry: Registry;
  snapshots: Snapshots;
  reader: DeclarationReader;
  pools: DomainPools;
  networkCounts: NetworkCounts;
}

/** The parts {@link loadSource} and a module's re-read use, over one host's own. */
export function hostLoadingParts(host: HostParts): LoadingParts {
  const { settings, pools } = host;
  return {
    registry: host.registry,
    snapshots: host.snapshots,
    reader: host.reader,
    execArgvFor: (version) => pools.execArgvFor(version),
    readsFor: (version) => pools.readsFor(version),
    confinedByPermissions: (isolation) => pools.confinedByPermissions(isolation),
    secretsRefusal: (version, where) =>
      secretsRefusal(version, {
        ...where,
        secretValues: settings.secretValues,
        exposeSecretValuesToThreadTiers: settings.exposeSecretValuesToThreadTiers,
        grant: networkGrant(settings.allowNetwork, version),
      }),
    networkOf: ({ packageName, permissions }) =>
      grantedNetwork(networkGrant(settings.allowNetwork, { packageName, permissions })),
    serverSettings: serverSettings(settings, (event) => host.networkCounts.record(event)),
    serverPlaces: pools.serverPlaces,
    adoptServers: (servers) => pools.adoptServers(servers),
  };
}

/**
 * Versions a newer one replaced: their workers end once their running calls have answered, then
 * their snapshots go. An MCP config's servers outlive a version: they end when no current version
 * holds them.
 */
export function retireVersions(
  retired: Iterable<SourceVersion>,
  host: Pick<HostParts, 'registry' | 'snapshots' | 'pools'>,
): void {
  for (const version of retired) {
    host.pools.retire(version, () => letGo(host.snapshots, version));
    const { servers } = version;
    if (servers !== undefined && host.registry.source(version.root)?.servers !== servers)
      host.pools.endServers(servers);
  }
}

/**
 * Pins what the registry has read and offered (or withheld only by the lock) into `lockFile`, its
 * MCP servers' runs prepared first, then judges the loaded modules against the new pins.
 */
export async function pinLoaded(registry: Registry, lockFile: string): Promise<PinReport> {
  await registry.prepareServerRuns();
  const { pinnable, unpinnable } = registry.pinnable();
  const report = pinModules(lockFile, pinnable, unpinnable);
  registry.refreshPins();
  return report;
}
