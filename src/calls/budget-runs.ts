/**
 * The runs of the worker budget (worker-budget.ts): while pools wait for places, a pool with calls
 * waiting may still run them on the units it has, for a run of up to {@link RUN_LENGTH} calls or
 * {@link RUN_MS}, counted against the pool first in line (its time from when that pool came to
 * wait). Outside a run, a pool that has just started a call keeps its idle unit for its grace
 * (twice the time between its calls, from {@link RUN_GRACE_MS} up to RUN_MS): its next call is
 * seldom far behind.
 */
import { RUN_GRACE_MS, RUN_LENGTH, RUN_MS } from './budget-limits.js';
import type { BudgetMember } from './budget-member.js';

export class BudgetRuns {
  readonly #now: () => number;
  /**
   * The pool first in line for a place when the runs were last counted from: runs are counted
   * against it, and a pool that takes its place as first in line sees every run restart.
   */
  #firstInLine: BudgetMember | undefined;
  /** When each pool waiting for a place came to wait. */
  readonly #waitingSince = new Map<BudgetMember, number>();
  /** Per pool in a run: calls started, when the first and the last of them started. */
  readonly #runs = new Map<BudgetMember, { calls: number; since: number; last: number }>();
  /** Per pool: when its last call started, and the time between its calls' starts, smoothed. */
  readonly #pace = new WeakMap<BudgetMember, { last: number; gap: number | undefined }>();

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The pools waiting for places now, in the order they came to wait. */
  get waiting(): Iterable<BudgetMember> {
    return this.#waitingSince.keys();
  }

  /**
   * A pool started a call while others waited: on a unit it had (`onOwnUnit`), or on one that
   * has just got its place.
   */
  started(member: BudgetMember, onOwnUnit: boolean): void {
    const run = this.#runs.get(member);
    const now = this.#now();
    // A run's time counts from when the pool first in line came to wait (from now for the pool
    // that has just got its place).
    const firstCameAt = this.#waitingSince.get(this.#firstInLine as BudgetMember) ?? now;
    const since = onOwnUnit ? Math.min(now, firstCameAt) : now;
    if (run === undefined) this.#runs.set(member, { calls: 1, since, last: now });
    else {
      run.calls += 1;
      run.last = now;
    }
  }

  /**
   * After a pass, the pools waiting for places (in turn order) and those that got one in it.
   * @returns whether another pool is first in line now (every other run restarted)
   */
  waitersAre(waiting: readonly BudgetMember[], placed: readonly BudgetMember[]): boolean {
    const now = this.#now();
    for (const member of this.#waitingSince.keys())
      if (!waiting.includes(member)) this.#waitingSince.delete(member);
    for (const member of waiting) if (!this.#waitingSince.has(member)) this.#waitingSince.set(member, now);
    if (waiting.length === 0) {
      this.#firstInLine = undefined;
      this.#runs.clear();
      return false;
    }
    if (waiting[0] === this.#firstInLine) return false;
    this.#firstInLine = waiting[0];
    // A new pool first in line sees every pool's run restart, but that of a pool that has just got
    // its place (its first call counts).
    for (const member of this.#runs.keys()) if (!placed.includes(member)) this.#runs.delete(member);
    return true;
  }

  /** A pool started a call at `now` (contended or not): the pace of its calls. */
  paced(member: BudgetMember, now: number): void {
    const pace = this.#pace.get(member);
    if (pace === undefined) {
      this.#pace.set(member, { last: now, gap: undefined });
      return;
    }
    const gap = now - pace.last;
    pace.gap = pace.gap === undefined ? gap : pace.gap + (gap - pace.gap) / 4;
    pace.last = now;
  }

  /**
   * How long after its last call started a pool keeps its idle unit: twice the time between its
   * calls (a caller that spreads its calls over more packages than places, slowed by the starts
   * this budget makes, calls each package further apart than RUN_GRACE_MS: a fixed grace would end
   * every unit just before its next call), from RUN_GRACE_MS up to RUN_MS.
   */
  #grace(member: BudgetMember): number {
    const gap = this.#pace.get(member)?.gap;
    return gap === undefined ? RUN_GRACE_MS : Math.min(RUN_MS, Math.max(RUN_GRACE_MS, 2 * gap));
  }

  /** A pool's idle unit was ended: its run is over. */
  ended(member: BudgetMember): void {
    this.#runs.delete(member);
  }

  /** Whether a pool has started a whole run of calls while others waited (RUN_LENGTH, or RUN_MS). */
  hadRun(member: BudgetMember): boolean {
    const run = this.#runs.get(member);
    return run !== undefined && (run.calls >= RUN_LENGTH || this.#now() - run.since >= RUN_MS);
  }

  /**
   * Until when a pool in its run keeps its idle unit from a waiting pool: the end of its run, or
   * with no call waiting, RUN_GRACE_MS after its last call started (`lastStarted`, outside a run
   * too). 0: it doesn't.
   */
  keptUntil(member: BudgetMember, lastStarted: number | undefined): number {
    const run = this.#runs.get(member);
    // Outside a run too: a pool that has just started a call is seldom done (see RUN_GRACE_MS).
    if (run === undefined) return (lastStarted ?? Number.NEGATIVE_INFINITY) + this.#grace(member);
    if (this.hadRun(member)) return 0;
    const end = run.since + RUN_MS;
    return member.queued > 0 ? end : Math.min(end, run.last + this.#grace(member));
  }
}
