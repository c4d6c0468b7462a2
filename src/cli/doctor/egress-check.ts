/**
 * The egress proxy: in the process tier's sandbox, a package held to a list of hosts reaches them
 * only through a proxy thread of the host, on a Unix socket in the host's temp folder. This starts
 * one, as the tier does for such a package's first call, and ends it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { networkSettings } from '../../host/network-options.js';
import { PackageEgress } from '../../process/network/egress.js';
import type { DoctorCheck } from './check.js';

/** How long the proxy may take to say it listens. */
const START_BOUND_MS = 10_000;

export async function egressCheck(sandboxed: boolean): Promise<DoctorCheck> {
  if (!sandboxed) {
    return {
      id: 'egress-proxy',
      status: 'not-applicable',
      found:
        'without a sandbox the process tier has no egress proxy: a package granted the network gets all of it, or none',
      tiers: ['process'],
    };
  }
  // Where it can't even make its folder, that is the finding, not a stack trace.
  let tmpRoot: string | undefined;
  let egress: PackageEgress | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    tmpRoot = await mkdtemp(join(tmpdir(), 'toolhost-doctor-'));
    const network = networkSettings({});
    egress = new PackageEgress(
      {
        packageName: 'toolhost-doctor',
        source: tmpRoot,
        grant: { kind: 'hosts', asked: undefined, granted: undefined },
        tmpRoot,
      },
      {
        limits: {
          maxConnections: network.maxConnections,
          maxBytesPerConnection: network.maxBytesPerConnection,
          maxBytesPerCall: network.maxBytesPerCall,
          idleTimeoutMs: network.idleTimeoutMs,
        },
        testHosts: undefined,
        trustCertificates: undefined,
        onNetwork: () => {},
      },
    );
    await Promise.race([
      egress.open(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`it did not listen within ${START_BOUND_MS} ms`)),
          START_BOUND_MS,
        );
      }),
    ]);
    return {
      id: 'egress-proxy',
      status: 'ok',
      found: 'an egress proxy started: a package held to a list of hosts reaches exactly those',
      tiers: ['process'],
    };
  } catch (error) {
    return {
      id: 'egress-proxy',
      status: 'missing',
      found: `the egress proxy could not start: ${error instanceof Error ? error.message : String(error)}; a package held to a list of hosts gets no network`,
      fix: `set TMPDIR to a local folder where Unix sockets can be made (now ${tmpdir()})`,
      tiers: ['process'],
    };
  } finally {
    clearTimeout(timer);
    await egress?.close();
    if (tmpRoot !== undefined) await rm(tmpRoot, { recursive: true, force: true });
  }
}
