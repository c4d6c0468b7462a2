/**
 * Which isolation tier a selftest run uses, and what its verdict rests on there. Selftests are what
 * runs before a package is trusted, so without `--isolation` the run takes the strongest tier this
 * machine has, as every command does: the process tier, where bubblewrap sandboxes it (a write
 * outside the tmpDir is refused, and every process a selftest starts lives in the package's pid
 * namespace, ended with it); else under Node's permission model (writes outside the tmpDir and
 * child processes refused); else, on a Node too old for it, where writes are only detected.
 */
import { type IsolationTier, PERMISSION_MODEL_USABLE } from '../../calls/isolation.js';
import { processTierSandboxed, strongestTier } from '../../process/sandbox/process-tier.js';

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
  if (requested === undefined) {
    const { tier, sandboxed } = await strongestTier();
    return { tier, sandboxed, chosen: false, watchWrites: !sandboxed };
  }
  // Probing for bubblewrap starts a trial sandbox: only when the process tier is the one.
  const sandboxed = requested === 'process' && (await processTierSandboxed());
  return { tier: requested, sandboxed, chosen: true, watchWrites: !sandboxed };
}

const WHAT_HOLDS: Record<string, string> = {
  sandboxed:
    'a bubblewrap sandbox per package refuses writes outside the tmpDir and ends every process a selftest starts',
  process: PERMISSION_MODEL_USABLE
    ? "a process per package under Node's permission model refuses writes outside the tmpDir and child processes"
    : 'a process per package, without a sandbox: writes outside the tmpDir are looked for, not refused',
  strict: "Node's permission model refuses writes outside the tmpDir and child processes",
  worker: 'worker threads: writes outside the tmpDir are looked for, not refused',
};

/** The run's first line: `isolation: process (the strongest here): a bubblewrap sandbox per package …`. */
export function describeTier(choice: SelftestTier): string {
  const how = WHAT_HOLDS[choice.sandboxed ? 'sandboxed' : choice.tier] ?? '';
  return `isolation: ${choice.tier}${choice.chosen ? '' : ' (the strongest here)'}: ${how}`;
}
