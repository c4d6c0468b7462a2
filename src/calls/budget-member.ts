/**
 * What the host-wide worker budget (worker-budget.ts) and the pools it starts calls for agree on:
 * what the budget reads of a pool, what a pool's next call takes, and the event the budget reports
 * each change in the count with. Every tier's pool (and the process tier's spares) implements it.
 */

/** What starting a pool's next waiting call takes. */
export type NextStart =
  /** A unit of its own is free (or, uncontended, can take a call queued behind a running one). */
  | 'now'
  /** A new unit, on a place of the budget. */
  | 'place'
  /** A spare unit started for no pool yet, handed over: its place goes with it. */
  | 'spare'
  /** Its own units are busy at its own maximum, or starting: it waits for itself, not for the budget. */
  | 'wait';

/** What the budget reads of one pool. */
export interface BudgetMember {
  /** The trust domain (package root), or `spare`, for events. */
  readonly source: string;
  /** Calls waiting to start. */
  readonly queued: number;
  /** Units it has now: running, idle, starting or ending. */
  readonly occupied: number;
  /** Units ended that have not exited yet: their places come back without anyone's help. */
  readonly ending: number;
  /** Units with nothing to run that `endIdle` can end now. */
  readonly idle: number;
  /** Nothing runs in it: no call started and unanswered (on a ready unit, or one still starting). */
  readonly resting: boolean;
  /** What its next call takes; `contended`: another pool waits for a place. */
  nextStart(contended: boolean): NextStart;
  /** Starts its next waiting call (or, the process tier, the process it will run on); false if nothing changed. */
  startNext(): boolean;
  /** Ends one idle unit; false if it has none. Its place comes back when it has exited. */
  endIdle(): boolean;
  /** Its units run no package yet (the process tier's spares): the first ended to make room. */
  readonly standby?: boolean;
}

/** A change in how many units the host runs. */
export interface WorkerBudgetEvent {
  type: 'started' | 'ended';
  /**
   * The package (or module) whose units changed; `spare` for the process tier's spare process (a
   * spare a package takes is `ended` for `spare` and `started` for the package: its place goes too).
   */
  source: string;
  /** How many of its units started or ended. */
  count: number;
  /** Units the whole host runs now. */
  workers: number;
  /** The budget (`maxWorkers`). */
  limit: number;
}
