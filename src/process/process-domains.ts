/**
 * The process tier as the host's domain pools see it: a version's pool (processes of its own), and
 * where its declarations are read (another, throwaway, process). Both get the same sandbox paths:
 * the version's snapshot read-only, the domain's tmp folder read-write, and the network only when the
 * package asks and the host allows: the whole network, or (held to a list of hosts) only its egress
 * proxy, for its calls; declaration reads of a package held to hosts get no network.
 */

import { type AddonAllowance, addonsAllowed } from '../calls/addons.js';
import { PERMISSION_MODEL_USABLE, workerExecArgv } from '../calls/isolation.js';
import type { PoolLimits } from '../calls/pool-workers.js';
import { WorkerBudget } from '../calls/worker-budget.js';
import type { SourceVersion } from '../registry/generation.js';
import type { Logger } from '../shared/logger.js';
import { DESCRIPTOR_INFO } from './child/child-fds.js';
import { type NetworkEvent, PackageEgress } from './network/egress.js';
import type { NetworkAllowance, NetworkGrant } from './network/grant.js';
import { egressSettings, type NetworkSettings } from './network/network-settings.js';
import { certificatesFor } from './network/secrets/certificate-authority.js';
import { type GrantedSecret, grantedSecrets } from './network/secrets/granted-secrets.js';
import { ProcessDomainPool } from './pool/process-pool.js';
import { ProcessReads } from './pool/process-reads.js';
import { ProcessSpares } from './pool/spares.js';
import { ProcessTier } from './sandbox/process-tier.js';
import type { SandboxPaths } from './sandbox/sandbox.js';

type ProcessVersion = Pick<SourceVersion, 'root' | 'snapshot' | 'packageName' | 'permissions'>;

/** A version's declaration reads in a process of their own; `close()` once the version is read. */
export interface VersionReads {
  read: ProcessReads['read'];
  close(): void;
}

/** What the process tier reads of the host's settings. */
export interface ProcessSettings {
  logger: Logger;
  allowNetwork: NetworkAllowance;
  /** The egress proxies' bounds (and, in tests only, their resolver). */
  network: NetworkSettings;
  processMemoryMb: number;
  readHeapMb: number;
  readTimeoutMs: number;
  /** Which packages may load native addons (undefined: only inside bubblewrap; see calls/addons.ts). */
  allowAddons: AddonAllowance | undefined;
  tmpRoot: string;
  /** The secret values the host grants (`secrets`), by name. */
  secretValues: Readonly<Record<string, string>>;
}

/**
 * Spare processes kept ready per host (spares.ts): one, so that a package's first call finds a
 * process started, at the cost of one idle process (its share of memory, see docs/isolation.md).
 */
const SPARE_PROCESSES = 1;

export class ProcessDomains {
  readonly #settings: ProcessSettings;
  readonly #tier: ProcessTier;
  readonly #reads = new Set<ProcessReads>();
  readonly #onNetwork: (event: NetworkEvent) => void;
  readonly #spares: ProcessSpares;
  readonly #budget: WorkerBudget;
  readonly #granted = new WeakMap<ProcessVersion['permissions'], GrantedSecret[]>();

  /** `budget`: the host's worker budget, where each package process and each spare counts one. */
  constructor(
    settings: ProcessSettings,
    onNetwork: (event: NetworkEvent) => void = () => {},
    budget: WorkerBudget = new WorkerBudget(Number.POSITIVE_INFINITY),
  ) {
    this.#settings = settings;
    this.#onNetwork = onNetwork;
    this.#budget = budget;
    this.#tier = new ProcessTier({ logger: settings.logger, allowNetwork: settings.allowNetwork });
    this.#spares = new ProcessSpares({
      tmpRoot: settings.tmpRoot,
      memoryMb: settings.processMemoryMb,
      count: SPARE_PROCESSES,
      environment: () => this.#tier.environment(),
      budget,
    });
  }

  /** The pool of a process-tier version: `limits` bound its processes as they would bound workers. */
  pool(version: ProcessVersion, limits: PoolLimits, onFault: (message: string) => void): ProcessDomainPool {
    const grant = this.#grant(version);
    const egress = grant.kind === 'hosts' ? this.#egress(version, grant) : undefined;
    const paths = this.#paths(version, limits.call.tmpDir, grant);
    return new ProcessDomainPool({
      // In its sandbox, a package granted nothing has no network: a failed connection is a refusal.
      limits: grant.kind === 'none' ? withNetworkOff(limits) : limits,
      ...(grant.kind === 'none' ? { networkGrantHint: grantHint(version.packageName, grant.why) } : {}),
      unsandboxedLimits: {
        ...limits,
        execArgv: this.#unsandboxedExecArgv(version, paths),
        allowAddons: this.#addons(version, false),
      },
      paths,
      memoryMb: this.#settings.processMemoryMb,
      environment: async () => {
        const found = await this.#tier.environment();
        if (grant.kind === 'hosts' && !found.sandbox.available)
          this.#tier.tellUnenforced(version.root, this.#manifest(version), grant);
        return found;
      },
      onFault,
      egress,
      spares: this.#spares,
      budget: this.#budget,
      source: version.root,
    });
  }

  /**
   * Where a version's declarations are read, with its reader workers' flags. `limits` are those its
   * pool will have: a spare process is started for its first call meanwhile, if it may hold it.
   */
  reads(version: ProcessVersion, execArgv: string[], tmpDir: string, limits?: PoolLimits): VersionReads {
    const grant = this.#grant(version);
    const paths = this.#paths(version, tmpDir, grant);
    // A spare is held to the limits its pool will have (see pool()).
    if (limits !== undefined && grant.kind === 'none') {
      const held = withNetworkOff(limits);
      void this.#spares.replenish(held, held.call);
    }
    // The certificates its proxy will present, made while it is read rather than on its first call.
    const secrets = this.#secrets(version);
    if (secrets.length > 0)
      certificatesFor(secrets.flatMap((secret) => secret.hosts.map(({ rule }) => rule.host))).catch(() => {});
    const reads = new ProcessReads({
      paths,
      memoryMb: this.#settings.processMemoryMb,
      heapMb: this.#settings.readHeapMb,
      timeoutMs: this.#settings.readTimeoutMs,
      execArgv,
      unsandboxedExecArgv: this.#unsandboxedExecArgv(version, paths),
      allowAddons: { sandboxed: this.#addons(version, true), unsandboxed: this.#addons(version, false) },
      environment: () => this.#tier.environment(),
    });
    this.#reads.add(reads);
    return {
      read: reads.read,
      close: () => {
        this.#reads.delete(reads);
        reads.close();
      },
    };
  }

  /**
   * Whether this tier's processes are confined by Node's permission model (no OS sandbox here),
   * which follows symbolic links: a package must then hold none that leads out of it, as under strict.
   */
  async confinedByPermissions(): Promise<boolean> {
    return PERMISSION_MODEL_USABLE && !(await this.#tier.environment()).sandbox.available;
  }

  /** Ends every read process still running (the host is closing), and the spares (awaited). */
  close(): Promise<void> {
    for (const reads of this.#reads) reads.close();
    this.#reads.clear();
    return this.#spares.close();
  }

  /** Whether the version's tools may load native addons, in bubblewrap (`sandboxed`) or without it. */
  #addons(version: ProcessVersion, sandboxed: boolean): boolean {
    return addonsAllowed(this.#settings.allowAddons, {
      tier: 'process',
      sandboxed,
      packageName: version.packageName,
    });
  }

  #manifest(version: ProcessVersion) {
    return { packageName: version.packageName, permissions: version.permissions };
  }

  #grant(version: ProcessVersion): NetworkGrant {
    const grant = this.#tier.grant(version.root, this.#manifest(version));
    // The whole network, with a secret granted, still goes through the proxy: it holds the value.
    return grant.kind === 'all' && this.#secrets(version).length > 0
      ? { kind: 'hosts', asked: undefined, granted: undefined }
      : grant;
  }

  /**
   * The package's granted secrets (a version left out for its bindings never gets here), worked out
   * once per version: its reads, its pool and its proxy all ask. Its permissions are its manifest's,
   * read once: they stand for the version.
   */
  #secrets(version: ProcessVersion): GrantedSecret[] {
    let secrets = this.#granted.get(version.permissions);
    if (secrets === undefined) {
      const granted = grantedSecrets({
        packageName: version.packageName ?? version.root,
        bindings: version.permissions.secrets ?? [],
        values: this.#settings.secretValues,
        grant: this.#tier.grant(version.root, this.#manifest(version)),
      });
      secrets = granted.ok ? granted.secrets : [];
      this.#granted.set(version.permissions, secrets);
    }
    return secrets;
  }

  #egress(version: ProcessVersion, grant: NetworkGrant): PackageEgress {
    return new PackageEgress(
      {
        packageName: version.packageName ?? version.root,
        source: version.root,
        grant,
        tmpRoot: this.#settings.tmpRoot,
        secrets: this.#secrets(version),
      },
      egressSettings(this.#settings.network, this.#onNetwork),
    );
  }

  /**
   * The flags of a version's processes (and its declaration readers) where there is no sandbox:
   * strict's, with the same grants (reads of the version's snapshot and toolhost's own code;
   * writes of its tmp folder; no child processes, workers or addons; the network, on Node 25 and
   * later, only as granted). The process is then only a boundary for memory and crashes; Node's
   * permission model keeps its files confined. One read more than strict's: the process's own
   * descriptors' flags, to close those it inherited (child-fds.ts). Where this Node's permission
   * model is not usable (before 20.16): the worker tier's flags. Addons only where named: nothing
   * holds native code there.
   */
  #unsandboxedExecArgv(version: ProcessVersion, paths: SandboxPaths): string[] {
    const allowAddons = this.#addons(version, false);
    const snapshot =
      version.snapshot === undefined
        ? {}
        : {
            snapshot: version.snapshot.grant,
            ...(version.snapshot.keptTree === undefined ? {} : { keptTree: version.snapshot.keptTree }),
          };
    const domain = { domain: version.root, ...snapshot, tmpDir: paths.tmpDir };
    if (!PERMISSION_MODEL_USABLE) return workerExecArgv('worker', domain, { allowAddons });
    return [
      ...workerExecArgv('strict', domain, { allowAddons, allowNetwork: paths.network }),
      `--allow-fs-read=${DESCRIPTOR_INFO}`,
    ];
  }

  #paths(version: ProcessVersion, tmpDir: string, grant: NetworkGrant): SandboxPaths {
    return {
      readOnly:
        version.snapshot === undefined
          ? []
          : [
              version.snapshot.grant,
              ...(version.snapshot.keptTree === undefined ? [] : [version.snapshot.keptTree]),
            ],
      tmpDir,
      network: grant.kind === 'all',
    };
  }
}

function withNetworkOff(limits: PoolLimits): PoolLimits {
  return { ...limits, call: { ...limits.call, networkOff: true } };
}

/**
 * What grants a package the network, for a refused connection's answer (`<host>` is where it went):
 * the manifest must ask for it, and the host grant it (`--allow-network`, or `allowNetwork`), by the
 * package's name.
 */
function grantHint(packageName: string | undefined, why: 'not-asked' | 'not-granted'): string {
  const entry = '"toolhost": { "permissions": { "net": ["<host>"] } }';
  if (packageName === undefined)
    return `a module loaded on its own, or a package without a name, is granted no network: put it in a named package whose package.json asks for the host (${entry}), then grant it with --allow-network <name>=<host> (or the allowNetwork option)`;
  const grant = `--allow-network ${packageName}=<host> (the allowNetwork option: { ${JSON.stringify(packageName)}: ["<host>"] })`;
  return why === 'not-granted'
    ? `package ${packageName} asks for the network and is not granted it; grant it with ${grant}`
    : `package ${packageName} asks for no network; once its package.json asks for the host (${entry}), grant it with ${grant}`;
}
