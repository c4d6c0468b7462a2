/**
 * Each package's connections through its egress proxy, counted for `host.status()`, and the
 * `network` event, whose listeners can't throw into the proxy's report loop.
 */

import type { NetworkEvent } from '../process/network/egress.js';
import type { ModuleStatus } from '../registry/generation.js';
import type { Logger } from '../shared/logger.js';

export class NetworkCounts {
  /** By the package's source folder. */
  readonly #counts = new Map<string, { allowed: number; refused: number; overBudget: number }>();
  readonly #emit: (event: NetworkEvent) => void;
  readonly #logger: Logger;

  constructor(emit: (event: NetworkEvent) => void, logger: Logger) {
    this.#emit = emit;
    this.#logger = logger;
  }

  /** Counts one connection and tells the listeners. */
  record(event: NetworkEvent): void {
    let counts = this.#counts.get(event.source);
    if (counts === undefined) {
      counts = { allowed: 0, refused: 0, overBudget: 0 };
      this.#counts.set(event.source, counts);
    }
    if (event.allowed) counts.allowed += 1;
    else if (event.bytes !== undefined) counts.overBudget += 1;
    else counts.refused += 1;
    try {
      this.#emit(event);
    } catch (error) {
      // A listener's throw must not reach the proxy's report loop; it is the host user's to see.
      this.#logger.error(`a network listener threw: ${String(error)}`);
    }
  }

  /** A copy of `status` with its package's counts, once it has any. */
  withCounts(status: ModuleStatus): ModuleStatus {
    const counts = this.#counts.get(status.source);
    return counts === undefined ? { ...status } : { ...status, network: { ...counts } };
  }
}
