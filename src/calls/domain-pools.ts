/**
 * The worker pools: one per current version of each trust domain (a package, or a module file on
 * its own). Workers keep the modules they imported, and a tool's globals, so a new version gets a
 * new pool; the old pool takes no new calls and ends once its running calls have answered, and only
 * then is its snapshot let go (a queued call of the old version still imports from it).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { CallSettings } from '../boundary/protocol.js';
import { CLOSED_OUTCOME } from '../declaration/read-worker.js';
import type { NetworkEvent } from '../process/network/egress.js';
import { exposedSecretValues } from '../process/network/secrets/granted-secrets.js';
import type { ProcessDomains, ProcessSettings, VersionReads } from '../process/process-domains.js';
import type { SourceVersion } from '../registry/generation.js';
import { addonsAllowed } from './addons.js';
import type { WorkerBudgetEvent } from './budget-member.js';
import type { DomainPaths, IsolationTier } from './isolation.js';
import type { PoolLimits } from './pool-workers.js';
import { ServerPlaces } from './server-places.js';
import { WorkerBudget } from './worker-budget.js';
import type { WorkerFlags } from './worker-flags.js';
import { type CallPool, TrustDomainPool } from './worker-pool.js';

/** What the pools read of the host's settings (the process tier's included). */
export interface PoolSettings extends ProcessSettings {
  maxThreadsPerPool: number;
  /** Units the whole host runs at once: worker threads, and the process tier's package processes. */
  maxWorkers: number;
  idleTimeoutMs: number;
  callHeapMb: number;
  callStackMb: number;
  timeoutGraceMs: number;
  env: Record<string, string>;
  /** `exposeSecretValuesToThreadTiers`: thread-tier packages that bind secrets get their values. */
  exposeSecretValuesToThreadTiers: boolean;
  dataDir: string;
  tmpRoot: string;
  maxResultBytes: number;
  maxLogChars: number;
}

export class DomainPools {
  readonly #settings: PoolSettings;
  readonly #flags: WorkerFlags;
  readonly #onFault: (source: string, message: string) => void;
  readonly #pools = new Map<SourceVersion, CallPool>();
  readonly #drainingPools = new Set<CallPool>();
  /** MCP configs' running servers, each set until no current version holds it. */
  readonly #serverSets = new Set<CallPool>();
  readonly #onNetwork: ((event: NetworkEvent) => void) | undefined;
  /**
   * The process tier's pools and reads, loaded with the tier's modules when its first version is
   * read: a host that never uses the tier never loads them.
   */
  #processes: ProcessDomains | undefined;
  #loadingProcesses: Promise<ProcessDomains> | undefined;
  /** `close()` was called: nothing starts the process tier, or a read in it, any more. */
  #closed = false;
  /** Each trust domain's tmp folder (under `tmpRoot`), by domain. */
  readonly #tmpDirs = new Map<string, string>();
  /** What the host's own tools' calls share (made on the first such call). */
  #inProcess: CallSettings | undefined;
  /** Every pool's calls start through this one budget. */
  readonly #budget: WorkerBudget;
  /** MCP servers' places in that budget: one per running server. */
  readonly serverPlaces: ServerPlaces;

  constructor(
    settings: PoolSettings,
    flags: WorkerFlags,
    onFault: (source: string, message: string) => void,
    onNetwork?: (event: NetworkEvent) => void,
    onWorkers?: (event: WorkerBudgetEvent) => void,
  ) {
    this.#budget = new WorkerBudget(settings.maxWorkers, { onEvent: onWorkers });
    this.serverPlaces = new ServerPlaces(this.#budget);
    this.#settings = settings;
    this.#flags = flags;
    this.#onFault = onFault;
    this.#onNetwork = onNetwork;
  }

  /** The pool of a current version (made on its first call). */
  poolFor(version: SourceVersion): CallPool {
    // An MCP config's servers are its pool, kept across its versions (see endServers).
    if (version.servers !== undefined) return version.servers;
    let pool = this.#pools.get(version);
    if (pool === undefined) {
      const { root } = version;
      const limits = this.#limitsFor(version);
      const onFault = (message: string) => this.#onFault(root, message);
      // The process tier runs each call in a process of the version's own, as the others run it in a worker.
      pool =
        version.isolation !== 'process'
          ? new TrustDomainPool(limits, onFault, { budget: this.#budget, source: root })
          : this.#processes !== undefined
            ? this.#processes.pool(version, limits, onFault)
            : new LoadingPool(this.#processTier().then((tier) => tier.pool(version, limits, onFault)));
      this.#pools.set(version, pool);
    }
    return pool;
  }

  /** Where a process-tier version's declarations are read (a process of their own); none otherwise. */
  async readsFor(
    version: Pick<SourceVersion, 'root' | 'isolation' | 'snapshot' | 'packageName' | 'permissions'>,
  ): Promise<VersionReads | undefined> {
    if (version.isolation !== 'process') return undefined;
    // A load that was under way when the host closed reaches here after close(): its reads answer
    // as reads the close cut short, and no read process or spare starts (nothing would end it).
    if (this.#closed) return CLOSED_READS;
    const tier = this.#processes ?? (await this.#processTier());
    if (this.#closed) return CLOSED_READS;
    const tmpDir = this.#domainTmpDir(version.root);
    return tier.reads(version, this.execArgvFor(version), tmpDir, this.#limitsFor(version));
  }

  /**
   * Whether a tier confines a package with Node's permission model, which follows symbolic links:
   * strict always, the process tier where there is no OS sandbox.
   */
  async confinedByPermissions(isolation: IsolationTier): Promise<boolean> {
    if (isolation === 'strict') return true;
    if (isolation !== 'process' || this.#closed) return false;
    const tier = this.#processes ?? (await this.#processTier());
    return tier.confinedByPermissions();
  }

  /** The process tier, its modules loaded on the first ask. */
  #processTier(): Promise<ProcessDomains> {
    this.#loadingProcesses ??= import('../process/process-domains.js').then(({ ProcessDomains }) => {
      this.#processes = new ProcessDomains(this.#settings, this.#onNetwork, this.#budget);
      return this.#processes;
    });
    return this.#loadingProcesses;
  }

  /** The limits of a version's pool. */
  #limitsFor(
    version: Pick<SourceVersion, 'root' | 'isolation' | 'snapshot' | 'packageName' | 'permissions'>,
  ): PoolLimits {
    return {
      maxThreads: this.#settings.maxThreadsPerPool,
      idleTimeoutMs: this.#settings.idleTimeoutMs,
      heapMb: this.#settings.callHeapMb,
      stackMb: this.#settings.callStackMb,
      timeoutGraceMs: this.#settings.timeoutGraceMs,
      env:
        version.isolation !== 'process' && this.#settings.exposeSecretValuesToThreadTiers
          ? {
              ...this.#settings.env,
              ...exposedSecretValues(version.permissions.secrets, this.#settings.secretValues),
            }
          : this.#settings.env,
      execArgv: this.execArgvFor(version),
      // The process tier's pool limits hold inside bubblewrap; without it, process-domains.ts decides.
      allowAddons: addonsAllowed(this.#settings.allowAddons, {
        tier: version.isolation,
        sandboxed: version.isolation === 'process',
        packageName: version.packageName,
      }),
      call: this.#callSettings(version.root),
    };
  }

  /**
   * A version is no longer current: its pool (if it had one) takes no new calls and ends once its
   * running calls have answered, or at `close()`. `then` runs after that.
   */
  retire(version: SourceVersion, then: () => void): void {
    const pool = this.#pools.get(version);
    this.#pools.delete(version);
    if (pool === undefined) {
      then();
      return;
    }
    this.#drainingPools.add(pool);
    void pool
      .drain()
      .catch((error: unknown) => this.#onFault('a drained pool', `it failed to end: ${String(error)}`))
      .finally(() => {
        this.#drainingPools.delete(pool);
        then();
      });
  }

  /**
   * Takes an MCP config's running servers into the host's keeping: they end at `close()`, or when
   * {@link endServers} is told they are no longer current. False (and nothing kept) once closed.
   */
  adoptServers(servers: CallPool): boolean {
    if (this.#closed) return false;
    this.#serverSets.add(servers);
    return true;
  }

  /** Servers no current version holds: they end once their calls in flight have answered. */
  endServers(servers: CallPool): void {
    if (!this.#serverSets.delete(servers)) return;
    void servers
      .drain()
      .catch((error: unknown) => this.#onFault('MCP servers', `they failed to end: ${String(error)}`));
  }

  /** The `execArgv` of a version's workers, call workers and declaration readers alike. */
  execArgvFor(
    version: Pick<SourceVersion, 'root' | 'isolation' | 'snapshot' | 'packageName' | 'permissions'>,
  ): string[] {
    // A strict worker imports from its package's snapshot and may read nothing else of the package.
    const paths: DomainPaths = { domain: version.root, tmpDir: this.#domainTmpDir(version.root) };
    if (version.snapshot !== undefined) paths.snapshot = version.snapshot.grant;
    if (version.snapshot?.keptTree !== undefined) paths.keptTree = version.snapshot.keptTree;
    // A version's manifest is part of its snapshot: a manifest that changes what it asks for is a
    // new version, with a new pool started with the new flags.
    const manifest = { packageName: version.packageName, permissions: version.permissions };
    return this.#flags.execArgv(version.isolation, paths, manifest);
  }

  /** What the host's own (in-process) tools' calls share. */
  inProcessSettings(): CallSettings {
    this.#inProcess ??= this.#callSettings('');
    return this.#inProcess;
  }

  /** Ends every worker, draining pools included; their pending calls answer `HOST_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    const pools = [...this.#pools.values(), ...this.#drainingPools, ...this.#serverSets];
    this.#pools.clear();
    this.#serverSets.clear();
    // A tier still loading is closed once it is there (it starts its spare when made).
    const processes = this.#loadingProcesses?.then((tier) => tier.close());
    await Promise.all([processes, ...pools.map((pool) => pool.close())]);
    this.#budget.close();
  }

  #callSettings(domain: string): CallSettings {
    return {
      dataDir: this.#settings.dataDir,
      tmpDir: this.#domainTmpDir(domain),
      maxResultBytes: this.#settings.maxResultBytes,
      maxLogChars: this.#settings.maxLogChars,
    };
  }

  /** Each domain's calls get their tmpDirs under one folder of its own (what a strict tier may write). */
  #domainTmpDir(domain: string): string {
    let path = this.#tmpDirs.get(domain);
    if (path === undefined) {
      const slug = domain === '' ? 'host' : createHash('sha256').update(domain).digest('hex').slice(0, 12);
      path = join(this.#settings.tmpRoot, slug);
      this.#tmpDirs.set(domain, path);
    }
    return path;
  }
}

/** The reads of a process-tier version asked for after `close()`. */
const CLOSED_READS: VersionReads = { read: () => Promise.resolve(CLOSED_OUTCOME), close: () => {} };

/** A process-tier pool asked for before the tier's modules were there: each call waits for them. */
class LoadingPool implements CallPool {
  readonly #pool: Promise<CallPool>;

  constructor(pool: Promise<CallPool>) {
    this.#pool = pool;
  }

  run(...call: Parameters<CallPool['run']>): ReturnType<CallPool['run']> {
    return this.#pool.then((pool) => pool.run(...call));
  }

  drain(): Promise<void> {
    return this.#pool.then((pool) => pool.drain());
  }

  close(): Promise<void> {
    return this.#pool.then((pool) => pool.close());
  }
}
