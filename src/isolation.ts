/**
 * Isolation tiers: how a trust domain's workers are started. `worker` (the default) is worker
 * threads with heap, time and environment bounds and in-process hardening.
 */
export type IsolationTier = 'worker';

export const ISOLATION_TIERS: readonly IsolationTier[] = ['worker'];

export interface DomainPaths {
  /** The package folder, or the single module file. */
  domain: string;
  /** The folder under which this domain's calls get their tmpDirs. */
  tmpDir: string;
}

/** The `execArgv` of a domain's workers (call workers and declaration readers) for a tier. */
export function workerExecArgv(
  _tier: IsolationTier,
  _paths: DomainPaths,
  options: { allowAddons: boolean },
): string[] {
  return options.allowAddons ? [] : ['--no-addons'];
}
