/**
 * What a publish changed, told to the host's screens: one `module` event per module whose state
 * changed between two generations, and one log line per new reason a module is left out (a reason
 * is logged once per version, never once per turn).
 */

import type { ModuleEvent } from '../host/events.js';
import type { Logger } from '../shared/logger.js';
import type { Generation, ModuleStatus } from './generation.js';

export class ModuleReporter {
  readonly #emit: (event: ModuleEvent) => void;
  readonly #logger: Logger;
  readonly #logged = new Set<string>();
  /** Each module's state as last reported: what the next change is told against. */
  #reported = new Map<string, ModuleStatus>();

  constructor(emit: (event: ModuleEvent) => void, logger: Logger) {
    this.#emit = emit;
    this.#logger = logger;
  }

  report(next: Generation): void {
    const before = this.#reported;
    const reported = new Map<string, ModuleStatus>();
    const events: ModuleEvent[] = [];
    for (const status of next.statuses) {
      const key = keyOf(status);
      const old = before.get(key);
      before.delete(key);
      // A re-read without a time is one being run or being scheduled: the schedule says when in a
      // moment, and a re-read's result is told against the time it was scheduled at.
      if (status.state === 'reread-pending' && status.nextRereadAt === undefined && old !== undefined) {
        reported.set(key, old);
        continue;
      }
      reported.set(key, status);
      if (old !== undefined && sameStatus(old, status)) continue;
      if (status.state === 'reread-pending' && status.nextRereadAt === undefined) continue;
      if (status.state === 'left-out' || status.state === 'reread-pending') this.#logOnce(status);
      const reread = old?.state === 'reread-pending' && old.nextRereadAt !== undefined;
      events.push({ type: status.state, reread, status: { ...status } });
    }
    for (const removed of before.values())
      events.push({ type: 'removed', reread: false, status: { ...removed } });
    // Recorded before anyone hears of it: a listener may publish again.
    this.#reported = reported;
    for (const event of events) this.#emit(event);
  }

  #logOnce(status: ModuleStatus): void {
    const key = `${keyOf(status)}\0${status.version}\0${status.code}\0${status.reason}`;
    if (this.#logged.has(key)) return;
    this.#logged.add(key);
    const suffix = status.state === 'reread-pending' ? '; it will be read again later' : '';
    this.#logger.warn(`left out ${status.path}: ${status.reason}${suffix}`);
  }
}

function keyOf(status: ModuleStatus): string {
  return `${status.source}\0${status.path}`;
}

function sameStatus(a: ModuleStatus, b: ModuleStatus): boolean {
  return (
    a.state === b.state &&
    a.code === b.code &&
    a.reason === b.reason &&
    a.nextRereadAt === b.nextRereadAt &&
    a.name === b.name &&
    a.version === b.version &&
    a.isolation === b.isolation &&
    // Under a lock: the same fields may differ from another pinned version in other values.
    JSON.stringify(a.difference) === JSON.stringify(b.difference)
  );
}
