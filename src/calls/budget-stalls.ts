/**
 * Stalls of the worker budget (worker-budget.ts): moments when no call runs anywhere and no unit
 * is starting, every call waiting for a place, past the turn after the last answer (its caller's
 * next call comes in that turn). A pool's grace (see BudgetRuns) is a bet that
 * its caller sends the next call soon, and a caller that waits on calls sends its next when one of
 * them answers: with none running, every caller left waits on the pools waiting for places, and a
 * grace would hold them all up for nothing (the bench's 10 packages on 8 processes spent 50 ms of
 * every switch so, its cores idle). So the pools waiting through a stall void every grace until
 * each has its place, and get their units all at once.
 */
import type { BudgetMember } from './budget-member.js';

export class BudgetStalls {
  readonly #afterTurn: (check: () => void) => void;
  /**
   * Pools that were waiting for places at a moment when no call ran anywhere: until each has its
   * place, no pool's grace keeps an idle unit from them.
   */
  readonly #waitedThrough = new Set<BudgetMember>();
  #checkPending = false;
  /** A stall was seen and no call has started since. */
  #seen = false;

  /** @param afterTurn runs a check once the callers of the calls just answered have had their turn */
  constructor(afterTurn: (check: () => void) => void) {
    this.#afterTurn = afterTurn;
  }

  /** A call started: a stall seen before has ended. */
  callStarted(): void {
    this.#seen = false;
  }

  /**
   * Looks for a stall among `occupants` (what holds places) while pools wait: one that is still
   * there a turn later (`stillStalled`, asked then) counts every pool `waiting` then as waiting
   * through it, and `onStall` runs.
   */
  watch(
    occupants: Iterable<BudgetMember>,
    stillStalled: () => { waiting: Iterable<BudgetMember> } | undefined,
    onStall: () => void,
  ): void {
    if (this.#checkPending || this.#seen || !isStalled(occupants)) return;
    // Nothing runs this moment, but a caller whose call has just answered may not have sent its
    // next yet: a stall is one that outlasts the turn those callers run in.
    this.#checkPending = true;
    this.#afterTurn(() => {
      this.#checkPending = false;
      const stall = stillStalled();
      if (stall === undefined) return;
      // Seen once: the next check waits for a call to start (it ends this stall).
      this.#seen = true;
      for (const member of stall.waiting) this.#waitedThrough.add(member);
      onStall();
    });
  }

  /**
   * How many of the pools `waiting` now waited through a stall (those that got their place since
   * are forgotten): while any did, no grace holds.
   */
  waitedThrough(waiting: readonly BudgetMember[]): number {
    for (const member of this.#waitedThrough)
      if (!waiting.includes(member)) this.#waitedThrough.delete(member);
    return this.#waitedThrough.size;
  }

  /** No pool waits any more. */
  clear(): void {
    this.#waitedThrough.clear();
  }
}

/**
 * No call of any of `occupants` runs or waits for its unit's start: every unit is idle or ending.
 * A unit still starting is on its way and will serve the calls behind it; ending others meanwhile
 * only adds starts beside it on the same cores (with a stall counted while units started, the bench's
 * 10 packages on 8 processes fell into ending a unit for each start, 20 calls per switch against
 * 150 without).
 */
export function isStalled(occupants: Iterable<BudgetMember>): boolean {
  for (const member of occupants) if (!member.resting) return false;
  return true;
}
