/**
 * Which isolation tier a selftest run uses, and what its verdict rests on there. Selftests are what
 * runs before a package is trusted, so without `--isolation` the run takes the strongest tier this
 * machine has, as every command does: the process tier, where bubblewrap sandboxes it (a write
 * outside the tmpDir is refused, and every process a selftest starts lives in the package's pid
 * namespace, ended with it); else under Node's permission model (writes outside the tmpDir and
 * child processes refused); else, on a Node too old for it, where writes are only detected.
 */
import { DEFAULT_TIER, type IsolationTier } from '../../calls/isolation.js';
import {
  describeHold,
  holdOf,
  type ProcessTierHold,
  processTierSandboxed,
} from '../../process/sandbox/process-tier.js';

export interface SelftestTier {
  tier: IsolationTier;
  /** Whether bubblewrap sandboxes the package processes (the process tier only). */
  sandboxed: boolean;
  /** Chosen with `--isolation` (true), or the strongest this machine has (false). */
  chosen: boolean;
  /**
   * Whether the watched folders are compared before and after: everywhere but in the sandbox,
   * whose read-only file system leaves a tool nothing outside its tmp folder to write (strict
   * refuses such writes too, and is watched all the same: the permission model is defence in depth).
   */
  watchWrites: boolean;
}

export async function selftestTier(requested: IsolationTier | undefined): Promise<SelftestTier> {
  const tier = requested ?? DEFAULT_TIER;
  // Probing for bubblewrap starts a trial sandbox: only when the process tier is the one.
  const sandboxed = tier === 'process' && (await processTierSandboxed());
  return { tier, sandboxed, chosen: requested !== undefined, watchWrites: !sandboxed };
}

/** What a selftest's verdict rests on in the process tier, after what holds the package there. */
const PROCESS_TIER_REFUSES: Record<ProcessTierHold, string> = {
  sandbox: 'writes outside the tmpDir are refused, and every process a selftest starts is ended with it',
  'permission-model': 'writes outside the tmpDir and child processes are refused',
  none: 'writes outside the tmpDir are looked for, not refused',
};

const THREAD_TIERS_HOLD: Record<Exclude<IsolationTier, 'process'>, string> = {
  strict: "Node's permission model refuses writes outside the tmpDir and child processes",
  worker: 'worker threads: writes outside the tmpDir are looked for, not refused',
};

/**
 * The run's first line: `isolation: process (the strongest here): a process per package, in a
 * bubblewrap sandbox: writes outside the tmpDir are refused, …`.
 */
export function describeTier(choice: SelftestTier): string {
  const hold = holdOf(choice.sandboxed);
  const how =
    choice.tier === 'process'
      ? `${describeHold(hold)}: ${PROCESS_TIER_REFUSES[hold]}`
      : THREAD_TIERS_HOLD[choice.tier];
  return `isolation: ${choice.tier}${choice.chosen ? '' : ' (the strongest here)'}: ${how}`;
}
