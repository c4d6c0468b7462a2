/**
 * The process tier as the host's domain pools see it: a version's pool (a process of its own), and
 * where its declarations are read (another, throwaway, process). Both get the same sandbox paths:
 * the version's snapshot read-only, the domain's tmp folder read-write, and the network only when the
 * package asks and the host allows.
 */

import type { PoolLimits } from '../calls/worker-pool.js';
import type { SourceVersion } from '../registry/generation.js';
import type { Logger } from '../shared/logger.js';
import { ProcessDomainPool } from './process-pool.js';
import { ProcessReads } from './process-reads.js';
import { ProcessTier } from './process-tier.js';
import type { SandboxPaths } from './sandbox.js';

type ProcessVersion = Pick<SourceVersion, 'root' | 'snapshot' | 'packageName' | 'permissions'>;

/** A version's declaration reads in a process of their own; `close()` once the version is read. */
export interface VersionReads {
  read: ProcessReads['read'];
  close(): void;
}

/** What the process tier reads of the host's settings. */
export interface ProcessSettings {
  logger: Logger;
  allowNetwork: boolean | readonly string[];
  processMemoryMb: number;
  readHeapMb: number;
  readTimeoutMs: number;
  allowAddons: boolean;
}

export class ProcessDomains {
  readonly #settings: ProcessSettings;
  readonly #tier: ProcessTier;
  readonly #reads = new Set<ProcessReads>();

  constructor(settings: ProcessSettings) {
    this.#settings = settings;
    this.#tier = new ProcessTier({ logger: settings.logger, allowNetwork: settings.allowNetwork });
  }

  /** The pool of a process-tier version, with the worker pool `limits` its process runs. */
  pool(version: ProcessVersion, limits: PoolLimits, onFault: (message: string) => void): ProcessDomainPool {
    return new ProcessDomainPool({
      limits,
      paths: this.#paths(version, limits.call.tmpDir),
      memoryMb: this.#settings.processMemoryMb,
      environment: () => this.#tier.environment(),
      onFault,
    });
  }

  /** Where a version's declarations are read, with its reader workers' flags. */
  reads(version: ProcessVersion, execArgv: string[], tmpDir: string): VersionReads {
    const reads = new ProcessReads({
      paths: this.#paths(version, tmpDir),
      memoryMb: this.#settings.processMemoryMb,
      heapMb: this.#settings.readHeapMb,
      timeoutMs: this.#settings.readTimeoutMs,
      execArgv,
      allowAddons: this.#settings.allowAddons,
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

  /** Ends every read process still running (the host is closing). */
  close(): void {
    for (const reads of this.#reads) reads.close();
    this.#reads.clear();
  }

  #paths(version: ProcessVersion, tmpDir: string): SandboxPaths {
    const manifest = { packageName: version.packageName, permissions: version.permissions };
    return {
      readOnly: version.snapshot === undefined ? [] : [version.snapshot.grant],
      tmpDir,
      network: this.#tier.grantsNetwork(version.root, manifest),
    };
  }
}
