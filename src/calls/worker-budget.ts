/**
 * The host-wide budget of workers: worker threads in the thread tiers, package processes in the
 * process tier, and the process tier's spare processes (a *unit* below is any of them). Pools never
 * start a call themselves: each tells the budget that something changed, and the budget starts
 * calls, one per turn, round-robin across the pools with calls waiting (first in, first out within
 * one pool).
 *
 * What a pool occupies is never granted and remembered: it is read from the pool after every change
 * (units running, idle, starting or ending), so every way a unit goes (an idle timeout, a crash, a
 * timeout's kill, an eviction, the pool closing) gives its place back the moment the pool reports it,
 * and no place can leak.
 *
 * Why it is live and fair: pools that need a new unit while the budget is full wait for places in
 * turn order, and no pool behind them gets a place before them. For each of them, up to
 * {@link SWITCHES_AT_ONCE} at once, one unit is ended (unless enough are on their way back): spares
 * first, then idle pools' units (cold ones least recently used first, others most recently used
 * first: see {@link COLD_MS}), then an idle unit of a pool that has had its run: a pool with calls
 * waiting may still run them on the units it has while others wait, for a run (budget-runs.ts: a
 * unit's start costs as much as a hundred trivial calls, and a run much shorter than that spends the
 * machine on starting workers). Every occupied place is then running a call (which ends: its
 * timeout bounds it, and the pool reports the idle unit), idle (ended now, or after its run), or
 * ending. So the first place freed goes to the first pool waiting, after at most one run of each
 * pool ahead of it.
 *
 * Stalls: when no call runs anywhere and no unit is starting (every call waits for a place) past
 * the turn after the last answer (its caller's next call comes in that turn), every caller that
 * waits on calls waits on the pools waiting for places, and no pool's grace is worth keeping: one
 * unit is ended for each pool waiting then, all at once, most recently used first (those a caller
 * rotating over the packages calls last) (budget-stalls.ts). A caller rotating over more packages
 * than places then stalls again only once every call in flight waits on a package switched out, so
 * each switch serves about (calls in flight) / (share of packages without a unit) calls: 32 for 64
 * calls in flight over 50 packages on 40 places.
 */

import { COLD_MS, SWITCHES_AT_ONCE } from './budget-limits.js';
import type { BudgetMember, WorkerBudgetEvent } from './budget-member.js';
import { BudgetRuns } from './budget-runs.js';
import { BudgetStalls, isStalled } from './budget-stalls.js';

export class WorkerBudget {
  readonly limit: number;
  readonly #onEvent: ((event: WorkerBudgetEvent) => void) | undefined;
  readonly #now: () => number;
  /** What each pool occupied when it last reported (kept after it leaves, until its units are gone). */
  readonly #occupied = new Map<BudgetMember, number>();
  #total = 0;
  /**
   * Pools that may start calls, least recently started first (a Map keeps insertion order), with
   * when each last started one (or joined).
   */
  readonly #recent = new Map<BudgetMember, number>();
  /** Pools with calls waiting, in turn order. */
  readonly #turns: BudgetMember[] = [];
  readonly #inTurns = new Set<BudgetMember>();
  #settling = false;
  #again = false;
  /** Pools wait for places. */
  #contended = false;
  readonly #runs: BudgetRuns;
  /** When the earliest run of a pool holding an idle unit ends, while pools wait for places. */
  #runEnds: NodeJS.Timeout | undefined;
  readonly #stalls: BudgetStalls;
  #closed = false;
  /**
   * Held while pools wait for places: a waiting call holds the host's event loop as a running one
   * does. What it waits for may hold nothing (a package process that is ending has its channel
   * unref'd), and a script awaiting the call would otherwise exit under it.
   */
  #holdsLoop: NodeJS.Timeout | undefined;

  /**
   * @param limit units the host may run at once (`Infinity`: no budget, the same code path)
   * @param options `onEvent`: told every change in the count, it must not throw; `now`: the clock
   *   runs and recency are read from (milliseconds, `performance.now` unless a test drives it);
   *   `afterTurn`: runs a check once the callers of the calls just answered have had their turn
   *   (`setImmediate` unless a test drives it)
   */
  constructor(
    limit: number,
    options: {
      onEvent?: ((event: WorkerBudgetEvent) => void) | undefined;
      now?: () => number;
      afterTurn?: (check: () => void) => void;
    } = {},
  ) {
    this.limit = limit;
    this.#onEvent = options.onEvent;
    this.#now = options.now ?? (() => performance.now());
    this.#stalls = new BudgetStalls(options.afterTurn ?? ((check) => setImmediate(check)));
    this.#runs = new BudgetRuns(this.#now);
  }

  /** Units the host runs now. */
  get workers(): number {
    return this.#total;
  }

  /**
   * Whether a unit that no call asked for (a spare) may start now: a place is free and no pool
   * waits for one.
   */
  get hasRoom(): boolean {
    return this.#total < this.limit && !this.#contended;
  }

  /**
   * No pool waits for a turn or a place, and no pass runs: a pool with an idle unit may start its
   * call on it at once ({@link startedOnOwnUnit}), without a pass (the host's fast path).
   */
  get quiet(): boolean {
    return this.#turns.length === 0 && !this.#contended && !this.#settling;
  }

  /**
   * A pool started a call on an idle unit of its own while the budget was quiet: what it occupies
   * is unchanged; only its recency is (what room-making reads).
   */
  startedOnOwnUnit(member: BudgetMember): void {
    this.#started(member);
  }

  /** A pool joins (on its first call); it may be told to start calls from now on. */
  join(member: BudgetMember): void {
    this.#recent.set(member, this.#now());
    if (!this.#occupied.has(member)) this.#occupied.set(member, 0);
  }

  /** A pool closes: it starts nothing more; its units still count until it reports them gone. */
  leave(member: BudgetMember): void {
    this.#recent.delete(member);
    this.changed(member);
  }

  /** Something changed in a pool (a call came, ended or was answered; a unit started, went idle or exited). */
  changed(member: BudgetMember): void {
    this.#count(member);
    // Nothing waits anywhere: a pass would start nothing and end nothing.
    if (this.quiet && member.queued === 0) return;
    if (this.#recent.has(member) && !this.#inTurns.has(member) && member.queued > 0) {
      this.#inTurns.add(member);
      this.#turns.push(member);
    }
    this.#settle();
  }

  #count(member: BudgetMember): void {
    const before = this.#occupied.get(member);
    if (before === undefined) return;
    const now = member.occupied;
    if (now === 0 && !this.#recent.has(member)) this.#occupied.delete(member);
    else this.#occupied.set(member, now);
    if (now === before) return;
    this.#total += now - before;
    this.#onEvent?.({
      type: now > before ? 'started' : 'ended',
      source: member.source,
      count: Math.abs(now - before),
      workers: this.#total,
      limit: this.limit,
    });
  }

  /** Runs passes until nothing changed during one; a change reported during a pass runs another. */
  #settle(): void {
    if (this.#settling) {
      this.#again = true;
      return;
    }
    this.#settling = true;
    try {
      do {
        this.#again = false;
        this.#pass();
      } while (this.#again);
    } finally {
      this.#settling = false;
    }
  }

  /**
   * Gives turns in order until every pool with calls waiting has been looked at once since the last
   * start. Pools that need a place the budget doesn't have wait for one, in turn order: no pool
   * behind the first of them gets a place before it, while pools may still run calls on the units
   * they have, up to their run.
   */
  #pass(): void {
    const waiting: BudgetMember[] = [];
    /** Pools that got a unit of their own in this pass. */
    const placed: BudgetMember[] = [];
    let heldToRun = false;
    let untried = this.#turns.length;
    while (untried > 0) {
      const member = this.#turns.shift() as BudgetMember;
      untried -= 1;
      if (!this.#recent.has(member) || member.queued === 0) {
        this.#inTurns.delete(member);
        continue;
      }
      const contended = this.#contended || waiting.length > 0;
      const next = member.nextStart(contended);
      const needsPlace = next === 'place' && this.#total >= this.limit;
      if ((next === 'place' || next === 'spare') && (waiting.length > 0 || needsPlace)) {
        waiting.push(member);
        continue;
      }
      this.#turns.push(member);
      if (next === 'wait') continue;
      if (next === 'now' && contended && this.#runs.hadRun(member)) {
        heldToRun = true;
        continue;
      }
      if (!member.startNext()) continue;
      this.#stalls.callStarted();
      if (next !== 'now') placed.push(member);
      if (contended) this.#runs.started(member, next === 'now');
      this.#started(member);
      this.#count(member);
      untried = this.#turns.length;
    }
    // Those waiting for places keep the first turns, in the order they came to wait.
    this.#turns.unshift(...waiting);
    this.#contended = waiting.length > 0;
    this.#holdLoop(this.#contended);
    // Runs are counted against the pool first in line: a new one restarts them (a pool held to its
    // run may start its calls, in another pass).
    if (this.#runs.waitersAre(waiting, placed) && heldToRun) this.#again = true;
    if (this.#contended) {
      this.#makeRoom(waiting);
      return;
    }
    this.#stalls.clear();
    clearTimeout(this.#runEnds);
    // No one waits any more: a pool held to its run may start its calls now, in another pass.
    if (heldToRun) this.#again = true;
  }

  /** A pool started a call: it is the most recently used, and its calls' pace is counted. */
  #started(member: BudgetMember): void {
    const now = this.#now();
    this.#runs.paced(member, now);
    this.#recent.delete(member);
    this.#recent.set(member, now);
  }

  #inRun(member: BudgetMember): boolean {
    return this.#keptUntil(member) > this.#now();
  }

  #keptUntil(member: BudgetMember): number {
    return this.#runs.keptUntil(member, this.#recent.get(member));
  }

  /**
   * Ends one unit for each pool waiting for a place (up to SWITCHES_AT_ONCE), less the places
   * already on their way back: spares first, then idle pools' cold units (least recently used
   * first), then idle pools' other units (most recently used first, see COLD_MS), then idle units
   * of pools that have had their run. A pool in its run keeps its idle unit though it has no call
   * waiting this moment, for its grace (in a busy host its next call is seldom far behind): if
   * that leaves a pool waiting, this runs again when the earliest such hold ends.
   */
  #makeRoom(waiting: BudgetMember[]): void {
    this.#stalls.watch(
      this.#occupied.keys(),
      () =>
        this.#closed || !this.#contended || !isStalled(this.#occupied.keys())
          ? undefined
          : { waiting: this.#runs.waiting },
      () => this.#settle(),
    );
    const waitedThroughStall = this.#stalls.waitedThrough(waiting);
    const graceVoid = waitedThroughStall > 0;
    let coming = 0;
    for (const member of this.#occupied.keys()) coming += member.ending;
    const atOnce = Math.max(SWITCHES_AT_ONCE, waitedThroughStall);
    let needed = Math.min(waiting.length, atOnce) - coming;
    if (needed <= 0) return;
    const now = this.#now();
    const leastRecent = [...this.#recent].filter(([member]) => !waiting.includes(member));
    const candidates = leastRecent.map(([member]) => member);
    const mostRecent = [...candidates].reverse();
    const cold = new Set(leastRecent.filter(([, last]) => now - last >= COLD_MS).map(([member]) => member));
    const free = (member: BudgetMember) => graceVoid || !this.#inRun(member);
    const passes: Array<[BudgetMember[], (member: BudgetMember) => boolean]> = [
      [candidates, (member) => member.standby === true],
      [candidates, (member) => member.resting && cold.has(member) && free(member)],
      [mostRecent, (member) => member.resting && free(member)],
      [candidates, free],
    ];
    for (const [order, eligible] of passes) {
      for (const member of order) {
        while (needed > 0 && member.idle > 0 && eligible(member) && member.endIdle()) {
          this.#runs.ended(member);
          needed -= 1;
        }
      }
    }
    clearTimeout(this.#runEnds);
    let soonest = Number.POSITIVE_INFINITY;
    for (const member of candidates) {
      if (member.idle > 0 && this.#inRun(member)) soonest = Math.min(soonest, this.#keptUntil(member));
    }
    // Otherwise every place runs a call, or will: the first to end reports, and this runs again.
    if (needed <= 0 || soonest === Number.POSITIVE_INFINITY) return;
    // Held (not unref'd): a call waits on it, and nothing else may hold the host's event loop.
    this.#runEnds = setTimeout(() => this.#settle(), Math.max(1, soonest - this.#now()));
  }

  #holdLoop(hold: boolean): void {
    if (hold === (this.#holdsLoop !== undefined)) return;
    if (hold) this.#holdsLoop = setInterval(() => {}, 2 ** 31 - 1);
    else {
      clearInterval(this.#holdsLoop);
      this.#holdsLoop = undefined;
    }
  }

  /** The host is closing: no run's end is waited for any more, and no wait holds the event loop. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#runEnds);
    this.#holdLoop(false);
  }
}
