/**
 * The host-wide budget of workers: worker threads in the thread tiers, package processes in the
 * process tier (a *unit* below is either). Pools never start a call themselves: each tells the budget
 * that something changed, and the budget starts calls, one per turn, round-robin across the pools
 * with calls waiting (first in, first out within one pool).
 *
 * What a pool occupies is never granted and remembered: it is read from the pool after every change
 * (units running, idle, starting or ending), so every way a unit goes (an idle timeout, a crash, a
 * timeout's kill, an eviction, the pool closing) gives its place back the moment the pool reports it,
 * and no place can leak.
 *
 * Why it is live: when the pool whose turn it is needs a new unit and the budget is full, nothing
 * behind it starts (so no one takes a place before it) and room is made: if no place is already on
 * its way back, the least recently used idle unit is ended, idle pools' first. Every occupied place
 * is then running a call (which ends: its timeout bounds it, and the pool reports the idle unit),
 * idle (ended now), or ending (it exits, or is let go and stops counting as coming back). So the
 * first place freed goes to that pool, and a pool waits at most one turn of every other pool.
 */

/** What starting a pool's next waiting call takes. */
export type NextStart =
  /** A unit of its own is free (or, uncontended, can take a call queued behind a running one). */
  | 'now'
  /** A new unit, on a place of the budget. */
  | 'place'
  /** Its own units are busy at its own maximum, or starting: it waits for itself, not for the budget. */
  | 'wait';

/** What the budget reads of one pool. */
export interface BudgetMember {
  /** The trust domain (package root), for events. */
  readonly source: string;
  /** Calls waiting to start. */
  readonly queued: number;
  /** Units it has now: running, idle, starting or ending. */
  readonly occupied: number;
  /** Units ended that have not exited yet: their places come back without anyone's help. */
  readonly ending: number;
  /** Units with nothing to run that `endIdle` can end now. */
  readonly idle: number;
  /** Nothing runs in it: no call started and unanswered. */
  readonly resting: boolean;
  /** What its next call takes; `contended`: another pool waits for a place. */
  nextStart(contended: boolean): NextStart;
  /** Starts its next waiting call (or, the process tier, the process it will run on); false if nothing changed. */
  startNext(): boolean;
  /** Ends one idle unit; false if it has none. Its place comes back when it has exited. */
  endIdle(): boolean;
}

/** A change in how many units the host runs. */
export interface WorkerBudgetEvent {
  type: 'started' | 'ended';
  /** The package (or module) whose units changed. */
  source: string;
  /** How many of its units started or ended. */
  count: number;
  /** Units the whole host runs now. */
  workers: number;
  /** The budget (`maxWorkers`). */
  limit: number;
}

export class WorkerBudget {
  readonly limit: number;
  readonly #onEvent: ((event: WorkerBudgetEvent) => void) | undefined;
  /** What each pool occupied when it last reported (kept after it leaves, until its units are gone). */
  readonly #occupied = new Map<BudgetMember, number>();
  #total = 0;
  /** Pools that may start calls, least recently started first (a Map keeps insertion order). */
  readonly #recent = new Map<BudgetMember, true>();
  /** Pools with calls waiting, in turn order. */
  readonly #turns: BudgetMember[] = [];
  readonly #inTurns = new Set<BudgetMember>();
  #settling = false;
  #again = false;
  /** The pool whose turn it is waits for a place. */
  #contended = false;

  /**
   * @param limit units the host may run at once (`Infinity`: no budget, the same code path)
   * @param onEvent told every change in the count; it must not throw
   */
  constructor(limit: number, onEvent?: (event: WorkerBudgetEvent) => void) {
    this.limit = limit;
    this.#onEvent = onEvent;
  }

  /** Units the host runs now. */
  get workers(): number {
    return this.#total;
  }

  /** A pool joins (on its first call); it may be told to start calls from now on. */
  join(member: BudgetMember): void {
    this.#recent.set(member, true);
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

  /** Gives turns in order until every pool with calls waiting has been looked at once since the last start. */
  #pass(): void {
    let untried = this.#turns.length;
    while (untried > 0) {
      const member = this.#turns[0] as BudgetMember;
      if (!this.#recent.has(member) || member.queued === 0) {
        this.#turns.shift();
        this.#inTurns.delete(member);
        untried -= 1;
        continue;
      }
      const next = member.nextStart(this.#contended);
      if (next === 'place' && this.#total >= this.limit) {
        // Its turn holds: nothing behind it starts until it has its place.
        this.#contended = true;
        this.#makeRoom(member);
        return;
      }
      this.#turns.push(this.#turns.shift() as BudgetMember);
      if (next === 'wait' || !member.startNext()) {
        untried -= 1;
        continue;
      }
      this.#recent.delete(member);
      this.#recent.set(member, true);
      this.#count(member);
      untried = this.#turns.length;
    }
    this.#contended = false;
  }

  /** The pool whose turn it is needs a place: unless one is on its way back, one idle unit ends. */
  #makeRoom(waiting: BudgetMember): void {
    for (const member of this.#occupied.keys()) if (member.ending > 0) return;
    // Idle pools first, least recently used first; then an idle unit of a pool that runs calls.
    for (const resting of [true, false]) {
      for (const member of this.#recent.keys()) {
        if (member === waiting || member.idle === 0 || (resting && !member.resting)) continue;
        if (member.endIdle()) return;
      }
    }
    // Every place runs a call: the first to end reports its idle unit, and this runs again.
  }
}
