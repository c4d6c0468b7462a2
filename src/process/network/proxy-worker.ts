/**
 * The thread one package's egress proxy runs in: the host's own code, off the host's event loop, so
 * a package that floods its proxy slows its own connections, not the host's calls or another
 * package's. It reports each decision to the host (see {@link PackageEgress}).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { hostAddresses } from './addresses.js';
import type { NetworkGrant } from './grant.js';
import { type ProxyLimits, startProxy } from './proxy-server.js';

/** What the host hands the proxy thread. */
export interface ProxyWorkerData {
  socketPath: string;
  packageName: string;
  grant: NetworkGrant;
  limits: ProxyLimits;
  testHosts: Record<string, string[]> | undefined;
}

/** What the proxy thread posts: it is listening, or it decided a request. */
export type ProxyWorkerMessage =
  | { type: 'listening' }
  | { type: 'failed'; message: string }
  | { type: 'note'; host: string; port: number; allowed: boolean; reason?: string; address?: string };

const data = workerData as ProxyWorkerData;
const post = (message: ProxyWorkerMessage) => parentPort?.postMessage(message);

startProxy({
  socketPath: data.socketPath,
  policy: {
    packageName: data.packageName,
    grant: data.grant,
    ownAddresses: hostAddresses(),
    testHosts: data.testHosts,
  },
  limits: data.limits,
  onNote: (note) => post({ type: 'note', ...note }),
}).then(
  () => post({ type: 'listening' }),
  (error: unknown) => post({ type: 'failed', message: String(error) }),
);
