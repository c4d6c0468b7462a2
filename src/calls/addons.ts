/**
 * Native addons: which packages may load them (`process.dlopen`), by tier. Native code runs outside
 * everything JavaScript-level hardening and Node's permission model can hold, so in the thread tiers
 * (the host's own process) and in the process tier without an OS sandbox (confined only by the
 * permission model) they are off unless the host allows them for a package by name. In the process
 * tier inside bubblewrap the operating system holds the package's process whatever code runs in it
 * (its file system, network, pid and user namespaces, its memory cgroup), so there they are on by
 * default: what remains is that a native crash ends that package's process (its calls in flight
 * answer `TOOL_CRASHED`; the host and other packages run on), and that a native bug is a way into
 * the sandbox's kernel surface, as any code in it has.
 */
import type { IsolationTier } from './isolation.js';

/**
 * `true`: every package; `false`: none, not even in the sandbox; a list of package names
 * (`package.json` `name`): those, in every tier, and the rest as by default.
 */
export type AddonAllowance = boolean | readonly string[];

/** Where a package runs, as far as its addons go. */
export interface AddonPlace {
  tier: IsolationTier;
  /** Whether its process runs in bubblewrap (the process tier only). */
  sandboxed: boolean;
  packageName: string | undefined;
}

/** Whether the package at `place` may load native addons under `allowance` (undefined: the default). */
export function addonsAllowed(allowance: AddonAllowance | undefined, place: AddonPlace): boolean {
  if (allowance === true) return true;
  if (allowance === false) return false;
  if (allowance !== undefined && place.packageName !== undefined && allowance.includes(place.packageName)) {
    return true;
  }
  return place.tier === 'process' && place.sandboxed;
}
