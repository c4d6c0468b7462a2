/**
 * What `toolhost doctor` reports: one check per thing a tier needs on this machine, each with what
 * was found and, for anything missing, the exact fix.
 */
import type { IsolationTier } from '../../calls/isolation.js';

/**
 * `ok`: present. `missing`: absent, and a tier is weaker or can't run for it (`fix` says what to
 * do). `note`: absent, with a fallback that still holds (`fix` says how to get the real thing).
 * `not-applicable`: not on this platform, or nothing to ask of it.
 */
export type CheckStatus = 'ok' | 'missing' | 'note' | 'not-applicable';

export interface DoctorCheck {
  /** Stable, for `--json`: `bubblewrap`, `apparmor-userns`, `user-namespaces`, `memory-cgroup`, … */
  id: string;
  status: CheckStatus;
  /** One line: what was found. */
  found: string;
  /** What to do, for `missing` and `note`: commands to run, or a setting, with its trade-off. */
  fix?: string;
  /** The tiers this matters to. */
  tiers: IsolationTier[];
}

/** `check` with its fix, when it has one (the JSON has no `fix: undefined`). */
export function withFix(check: Omit<DoctorCheck, 'fix'>, fix: string | undefined): DoctorCheck {
  return fix === undefined ? check : { ...check, fix };
}
