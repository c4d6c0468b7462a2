/**
 * `host.load` of an MCP client config: its servers are started and read, then published as one
 * version of the config's source, as a package's modules are. A load of the config unchanged keeps
 * the servers running (and starts again those left out for good); a changed one starts a new set, and the old set ends once it is no longer
 * current. Later changes (a server's `list_changed`, a restart, a server left out for dying) are
 * published the same way, each as a whole new version.
 *
 * Loaded with a dynamic import only when a config is used: the MCP client and the sandbox's code
 * stay unloaded otherwise.
 */
import type { ServerPlaces } from '../../calls/server-places.js';
import { cgroupSupport } from '../../process/sandbox/memory-cgroup.js';
import { sandboxSupport } from '../../process/sandbox/sandbox.js';
import type { Registry } from '../../registry/registry.js';
import type { ConfiguredServer } from './config.js';
import { ServerSet } from './server-set.js';
import type { ServerSettings } from './server-start.js';

/** What loading a config needs of the host. */
export interface ServersLoading {
  registry: Registry;
  /** The host's settings for servers (the machine's sandbox and cgroups are found here). */
  serverSettings: Omit<ServerSettings, 'sandbox' | 'cgroups' | 'hostEnv'>;
  /** The host's worker budget's places for servers: each running server holds one. */
  serverPlaces: ServerPlaces;
  /** Hands a set to the host, which ends it at `close()`; false when the host is closed already. */
  adoptServers(set: ServerSet): boolean;
}

/** Starts (or keeps) the servers of the config at `root` and publishes them. */
export async function loadServers(
  parts: ServersLoading,
  root: string,
  configured: ConfiguredServer[],
): Promise<void> {
  const { registry } = parts;
  const current = registry.source(root)?.servers;
  if (current instanceof ServerSet && current.fingerprint === JSON.stringify(configured)) {
    // Unchanged: its servers keep running, and those left out for good are tried again.
    if (await current.retry()) current.onChange?.();
    return;
  }
  const [sandbox, cgroups] = await Promise.all([sandboxSupport(), cgroupSupport()]);
  const settings = { ...parts.serverSettings, sandbox, cgroups, hostEnv: { ...process.env } };
  const set = new ServerSet(root, configured, settings, parts.serverPlaces);
  if (!parts.adoptServers(set)) return;
  // Its servers' places in load order are taken now, before any starts: how fast a server starts
  // never decides a clash of names.
  const { ticket, orderOf } = registry.beginLoad(root, set.entryPaths);
  await set.start();
  registry.publish({ type: 'source', version: set.versionOf(orderOf), ticket });
  if (registry.source(root)?.servers !== set) {
    // A newer load (or an unload, or close) came first.
    await set.close();
    return;
  }
  set.onChange = () => {
    if (registry.source(root)?.servers !== set) return;
    const next = registry.beginLoad(root, set.entryPaths);
    registry.publish({ type: 'source', version: set.versionOf(next.orderOf), ticket: next.ticket });
  };
}
