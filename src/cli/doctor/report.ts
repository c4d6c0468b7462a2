/**
 * `toolhost doctor`'s findings: every check, and what each tier does on this machine with them.
 * The verdict is about the default tier: on Linux it runs at full strength only in bubblewrap's
 * sandbox; elsewhere (no bubblewrap there) under Node's permission model.
 */
import {
  DEFAULT_TIER,
  type IsolationTier,
  PERMISSION_MODEL_USABLE,
  strictTierGaps,
} from '../../calls/isolation.js';
import {
  describeHold,
  processEnvironment,
  processTierGaps,
  processTierHold,
} from '../../process/sandbox/process-tier.js';
import { cgroupCheck } from './cgroup-check.js';
import type { DoctorCheck } from './check.js';
import { egressCheck } from './egress-check.js';
import { nodeChecks } from './node-checks.js';
import { sandboxChecks } from './sandbox-checks.js';
import { storeCheck } from './store-check.js';

export interface TierReport {
  tier: IsolationTier;
  /** Whether it is the tier a host or command runs when none is named. */
  default: boolean;
  /** Whether this machine runs it at all. */
  runs: boolean;
  /** What holds a package in it here. */
  holds: string;
  /** What it lacks here (empty when nothing). */
  lacks: string[];
}

export interface DoctorReport {
  /** Whether the default tier runs at full strength here (the exit code: 0, else 1). */
  ok: boolean;
  node: string;
  platform: string;
  defaultTier: { tier: IsolationTier; sandboxed: boolean; permissionModel: boolean };
  tiers: TierReport[];
  checks: DoctorCheck[];
}

export async function doctorReport(env: NodeJS.ProcessEnv): Promise<DoctorReport> {
  const hold = await processTierHold();
  const sandboxed = hold === 'sandbox';
  const environment = await processEnvironment();
  const checks = [
    ...(await sandboxChecks()),
    await cgroupCheck(),
    ...nodeChecks(),
    await storeCheck(env),
    await egressCheck(sandboxed),
  ];
  const tiers: TierReport[] = [
    {
      tier: 'process',
      default: true,
      runs: true,
      holds: describeHold(hold),
      lacks: processTierGaps(environment),
    },
    {
      tier: 'strict',
      default: false,
      runs: PERMISSION_MODEL_USABLE,
      holds: "worker threads under Node's permission model: defence in depth, not a boundary",
      lacks: PERMISSION_MODEL_USABLE
        ? strictTierGaps()
        : ['a permission model that covers WASI (Node.js 20.16 and later): it does not run here'],
    },
    {
      tier: 'worker',
      default: false,
      runs: true,
      holds: "worker threads: every fault is contained, a hostile tool is not (it shares the host's process)",
      lacks: [],
    },
  ];
  const ok = process.platform === 'linux' ? sandboxed : hold === 'permission-model';
  return {
    ok,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    defaultTier: { tier: DEFAULT_TIER, sandboxed, permissionModel: hold === 'permission-model' },
    tiers,
    checks,
  };
}
