/**
 * The thread one package's egress proxy runs in: the host's own code, off the host's event loop, so
 * a package that floods its proxy slows its own connections, not the host's calls or another
 * package's. It reports each decision to the host (see {@link PackageEgress}), and hears from the
 * host when the package's calls begin and end, which is what its byte budget is charged by.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { hostAddresses } from './addresses.js';
import { type BudgetOver, CallBudget } from './call-budget.js';
import type { NetworkGrant } from './grant.js';
import type { ProxyLimits } from './proxy-options.js';
import { startProxy } from './proxy-server.js';
import type { ProxySecrets } from './secrets/proxy-secrets.js';

/** What the host hands the proxy thread. */
export interface ProxyWorkerData {
  socketPath: string;
  packageName: string;
  grant: NetworkGrant;
  limits: ProxyLimits;
  testHosts: Record<string, string[]> | undefined;
  /** The package's calls already in flight (a proxy started again while they run). */
  running: string[];
  /** The package's secrets (values, placeholders, certificates), when it has any granted. */
  secrets: ProxySecrets | undefined;
  /** An MCP server's proxy: connections are taken between its calls too (see CallBudget). */
  alwaysOpen?: boolean | undefined;
  /** Who the grant is of, in messages (`MCP server fs`); `package <packageName>` when absent. */
  subject?: string | undefined;
}

/** What the proxy thread posts: it is listening, it decided a request, a call began, a budget ran out. */
export type ProxyWorkerMessage =
  | { type: 'listening' }
  | { type: 'failed'; message: string }
  | {
      type: 'note';
      host: string;
      port: number;
      allowed: boolean;
      reason?: string;
      address?: string;
      secret?: string;
    }
  | { type: 'begun'; taskId: string }
  | ({ type: 'over' } & BudgetOver);

/**
 * What the host posts: a call began (answered `begun`), a call ended (given back by the process),
 * or a call that ran over was answered (its held connections may close).
 */
export type ProxyHostMessage =
  | { type: 'begin'; taskId: string }
  | { type: 'end'; taskId: string }
  | { type: 'cut'; taskId: string };

const data = workerData as ProxyWorkerData;
const post = (message: ProxyWorkerMessage) => parentPort?.postMessage(message);

const budget = new CallBudget({
  limit: data.limits.maxBytesPerCall,
  running: data.running,
  alwaysOpen: data.alwaysOpen,
  onOver: (over) => post({ type: 'over', ...over }),
});

parentPort?.on('message', (message: ProxyHostMessage) => {
  if (typeof message?.taskId !== 'string') return;
  if (message.type === 'begin') {
    budget.begin(message.taskId);
    post({ type: 'begun', taskId: message.taskId });
  } else if (message.type === 'end') budget.end(message.taskId);
  else if (message.type === 'cut') budget.cut(message.taskId);
});

startProxy({
  socketPath: data.socketPath,
  policy: {
    packageName: data.packageName,
    subject: data.subject,
    grant: data.grant,
    ownAddresses: hostAddresses(),
    testHosts: data.testHosts,
  },
  limits: data.limits,
  budget,
  secrets: data.secrets,
  onNote: (note) => post({ type: 'note', ...note }),
}).then(
  () => post({ type: 'listening' }),
  (error: unknown) => post({ type: 'failed', message: String(error) }),
);
