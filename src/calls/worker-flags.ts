/**
 * The flags each trust domain's workers start with, for one host: its tier's permission flags, the
 * network for a package that asks and that the host allows, and what the host says about them once
 * (what strict can't contain on this Node; a package whose request for the network it refuses).
 */

import { askedText, describeGrant, type NetworkAllowance, networkGrant } from '../process/network/grant.js';
import type { Logger } from '../shared/logger.js';
import { NO_PERMISSIONS, type PackagePermissions } from '../sources/resolve-path.js';
import { type AddonAllowance, addonsAllowed } from './addons.js';
import {
  type DomainPaths,
  grantsNetwork,
  type IsolationTier,
  STRICT_DENIES_NETWORK,
  strictTierGaps,
  workerExecArgv,
} from './isolation.js';

/** What a domain's manifest says about it; a single module file has no manifest. */
export interface DomainManifest {
  packageName: string | undefined;
  permissions: PackagePermissions;
}

export const NO_MANIFEST: DomainManifest = Object.freeze({
  packageName: undefined,
  permissions: NO_PERMISSIONS,
});

export interface WorkerFlagsSettings {
  allowAddons: AddonAllowance | undefined;
  allowNetwork: NetworkAllowance;
  logger: Logger;
}

export class WorkerFlags {
  readonly #settings: WorkerFlagsSettings;
  #gapsTold = false;
  readonly #refusalsTold = new Set<string>();
  readonly #hostsTold = new Set<string>();

  constructor(settings: WorkerFlagsSettings) {
    this.#settings = settings;
  }

  /**
   * What decides a domain's workers besides its modules' versions: a pool started with other flags
   * must not serve it (a manifest that stops asking for the network takes it away at once).
   */
  key(tier: IsolationTier, manifest: DomainManifest): string {
    return tier === 'strict' && this.#grantsNetwork(manifest) ? 'strict+net' : tier;
  }

  /** The `execArgv` of a domain's call workers and declaration readers. */
  execArgv(tier: IsolationTier, paths: DomainPaths, manifest: DomainManifest): string[] {
    const allowNetwork = tier === 'strict' && this.#grantsNetwork(manifest);
    // The process tier's workers get these flags inside bubblewrap only (process-domains.ts).
    const allowAddons = addonsAllowed(this.#settings.allowAddons, {
      tier,
      sandboxed: tier === 'process',
      packageName: manifest.packageName,
    });
    const flags = workerExecArgv(tier, paths, { allowAddons, allowNetwork });
    if (tier === 'strict') this.#tell(paths.domain, manifest, allowNetwork);
    if (tier !== 'process') this.#tellHosts(tier, paths.domain, manifest);
    return flags;
  }

  #grantsNetwork(manifest: DomainManifest): boolean {
    return grantsNetwork(this.#settings.allowNetwork, manifest);
  }

  /**
   * A package held to a list of hosts, in a tier that can't hold it to one: said once per package.
   * Strict on Node 25 and later gives it no network (`--allow-net` is all or nothing, and the safe
   * side of a list is none); the worker tier, and strict before Node 25, can't deny it any.
   */
  #tellHosts(tier: IsolationTier, domain: string, manifest: DomainManifest): void {
    const grant = networkGrant(this.#settings.allowNetwork, manifest);
    if (grant.kind !== 'hosts' || this.#hostsTold.has(domain)) return;
    this.#hostsTold.add(domain);
    const name = manifest.packageName ?? domain;
    const denies = tier === 'strict' && STRICT_DENIES_NETWORK;
    this.#settings.logger.warn(
      denies
        ? `${name} is granted network access to ${describeGrant(grant)} only, and strict isolation can only allow or deny the whole network: its strict workers have none (the process tier in bubblewrap holds a package to its hosts)`
        : `${name} is granted network access to ${describeGrant(grant)} only, and ${tier} isolation on Node ${process.version} does not contain the network: its tools are not held to those hosts (the process tier in bubblewrap is)`,
    );
  }

  /** Once per host, not per call: the first strict domain hears what this Node can't contain. */
  #tell(domain: string, manifest: DomainManifest, allowNetwork: boolean): void {
    if (!this.#gapsTold) {
      this.#gapsTold = true;
      const gaps = strictTierGaps();
      if (gaps.length > 0) {
        this.#settings.logger.warn(
          `strict isolation on Node ${process.version} does not contain ${gaps.join(', nor ')}; see the table of what each tier contains in docs/isolation.md`,
        );
      }
    }
    if (
      networkGrant(this.#settings.allowNetwork, manifest).kind === 'none' &&
      manifest.permissions.net !== false &&
      !allowNetwork &&
      STRICT_DENIES_NETWORK &&
      !this.#refusalsTold.has(domain)
    ) {
      this.#refusalsTold.add(domain);
      this.#settings.logger.warn(
        `${manifest.packageName ?? domain} asks for the network (${askedText(manifest.permissions.net)}) and \`allowNetwork\` does not grant it: its strict workers have none`,
      );
    }
  }
}
