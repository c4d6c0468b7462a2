/**
 * What the process tier gives on this machine, found once per process (is bubblewrap there and
 * usable, can the host make memory cgroups), what holds a package in it here (the one sentence
 * every line that names it says), and what a host says about it, once: the first time one of its
 * packages starts a process, it names what the tier lacks here, and for each package that asks for
 * the network without being granted it, that it has none.
 */

import { NETWORK_GAP, PERMISSION_MODEL_USABLE, STRICT_DENIES_NETWORK } from '../../calls/isolation.js';
import type { DomainManifest } from '../../calls/worker-flags.js';
import type { Logger } from '../../shared/logger.js';
import {
  askedText,
  describeGrant,
  type NetworkAllowance,
  type NetworkGrant,
  networkGrant,
} from '../network/grant.js';
import { type CgroupSupport, cgroupSupport } from './memory-cgroup.js';
import { BUSY_INTERVAL_MS } from './rss-watchdog.js';
import { type SandboxSupport, sandboxSupport } from './sandbox.js';

/** What this machine gives a package's process (found once per process). */
export interface ChildEnvironment {
  sandbox: SandboxSupport;
  cgroups: CgroupSupport;
}

/** How the host's notice of what the tier lacks begins. */
const PROCESS_TIER_NOTICE = 'process isolation here runs without';

/**
 * Whether `message`, a host's warning, is its notice of what the process tier lacks on this machine
 * (a caller that hides the host's other warnings still shows this one: nothing else would tell).
 */
export function isProcessTierNotice(message: string): boolean {
  return message.startsWith(PROCESS_TIER_NOTICE);
}

/** Whether the process tier runs in a bubblewrap sandbox here (the first ask starts a trial sandbox). */
export async function processTierSandboxed(): Promise<boolean> {
  return (await processEnvironment()).sandbox.available;
}

/**
 * What holds a package in the process tier here: a bubblewrap sandbox, else Node's permission model
 * with strict's grants (a Node whose permission model covers WASI, 20.16 and later), else nothing.
 */
export type ProcessTierHold = 'sandbox' | 'permission-model' | 'none';

/** What holds a package in the process tier, on a machine where bubblewrap does (`sandboxed`) or doesn't. */
export function holdOf(sandboxed: boolean): ProcessTierHold {
  if (sandboxed) return 'sandbox';
  return PERMISSION_MODEL_USABLE ? 'permission-model' : 'none';
}

/**
 * What holds a package in the default tier, the process tier (`DEFAULT_TIER`), on this machine.
 * Found once per process: the first ask starts a trial sandbox.
 */
export async function processTierHold(): Promise<ProcessTierHold> {
  return holdOf(await processTierSandboxed());
}

/** What holds a package in the process tier, as every line that names it says it. */
export function describeHold(hold: ProcessTierHold): string {
  if (hold === 'sandbox') return 'a process per package, in a bubblewrap sandbox';
  if (hold === 'permission-model')
    return "a process per package, under Node's permission model with strict's grants";
  return 'a process per package, not confined';
}

let environment: Promise<ChildEnvironment> | undefined;

/** This machine's sandbox and memory cgroups, as the process tier can use them. */
export function processEnvironment(): Promise<ChildEnvironment> {
  environment ??= Promise.all([sandboxSupport(), cgroupSupport()]).then(([sandbox, cgroups]) => ({
    sandbox,
    cgroups,
  }));
  return environment;
}

/** What the process tier can't give here (empty when it gives everything it can anywhere). */
export function processTierGaps(found: ChildEnvironment): string[] {
  const gaps: string[] = [];
  if (!found.sandbox.available) {
    if (PERMISSION_MODEL_USABLE) {
      // Its processes run under strict's flags instead (process-domains.ts): what the permission
      // model can't contain on this Node, they can't either. (Not the host's working directory:
      // Node grants that to workers, not to a process's main thread, and the processes that run
      // workers work in their own tmp folder.)
      const modelGaps = STRICT_DENIES_NETWORK ? [] : [NETWORK_GAP];
      gaps.push(
        `an OS sandbox (${found.sandbox.reason}), so its processes are confined by Node's permission model with strict's grants instead${modelGaps.length > 0 ? `, which here does not contain ${modelGaps.join(', nor ')}` : ''}`,
      );
    } else {
      gaps.push(
        `an OS sandbox (${found.sandbox.reason}), so its tools can read and write what the host's user can, reach the network and signal the host's processes`,
      );
    }
  }
  if (!found.cgroups.available) {
    gaps.push(
      process.platform === 'linux'
        ? `a memory cgroup (${found.cgroups.reason}), so processMemoryMb is watched (resident memory, every ${BUSY_INTERVAL_MS} ms), not enforced by the kernel`
        : `a memory limit (${found.cgroups.reason}), so processMemoryMb is not enforced`,
    );
  }
  return gaps;
}

export class ProcessTier {
  readonly #logger: Logger;
  readonly #allowNetwork: NetworkAllowance;
  #told = false;
  readonly #refusalsTold = new Set<string>();
  readonly #unenforcedTold = new Set<string>();

  constructor(options: { logger: Logger; allowNetwork: NetworkAllowance }) {
    this.#logger = options.logger;
    this.#allowNetwork = options.allowNetwork;
  }

  /** This machine's environment; the first caller of a host hears its gaps. */
  async environment(): Promise<ChildEnvironment> {
    const found = await processEnvironment();
    if (!this.#told) {
      this.#told = true;
      const gaps = processTierGaps(found);
      if (gaps.length > 0) {
        this.#logger.warn(
          `${PROCESS_TIER_NOTICE} ${gaps.join(', and without ')}; see the table of what each tier contains in docs/isolation.md`,
        );
      }
    }
    return found;
  }

  /** What network a package's process gets; a refused request is said once per package. */
  grant(domain: string, manifest: DomainManifest): NetworkGrant {
    const grant = networkGrant(this.#allowNetwork, manifest);
    if (grant.kind === 'none' && grant.why === 'not-granted' && !this.#refusalsTold.has(domain)) {
      this.#refusalsTold.add(domain);
      this.#logger.warn(
        `${manifest.packageName ?? domain} asks for the network (${askedText(manifest.permissions.net)}) and \`allowNetwork\` does not grant it: its process has none where bubblewrap sandboxes it`,
      );
    }
    return grant;
  }

  /** A package held to hosts where there is no sandbox to hold it: said once per package. */
  tellUnenforced(domain: string, manifest: DomainManifest, grant: NetworkGrant): void {
    if (this.#unenforcedTold.has(domain)) return;
    this.#unenforcedTold.add(domain);
    this.#logger.warn(
      `${manifest.packageName ?? domain} is granted network access to ${describeGrant(grant)} only, which the process tier enforces only inside bubblewrap: here its tools are not held to those hosts; see the table of what each tier contains in docs/isolation.md`,
    );
  }
}
