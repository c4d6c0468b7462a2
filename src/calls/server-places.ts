/**
 * MCP servers' places in the host-wide worker budget (worker-budget.ts). A stdio server is stateful
 * and runs while its config is loaded, so it can't be ended to make room: each running server holds
 * one place from its start until it is left out, unloaded or closed, through its restarts (a restart
 * never waits for a place, and never counts twice).
 *
 * A server asks for its place as a pool asks for a new unit: in turn, and when the budget is full
 * the budget ends idle units (of pools, or the spare) to make room, so a server waits at most for the
 * calls running ahead of it. Servers may hold every place but one: the last always stays for
 * packages' calls (which would otherwise wait for a server to be unloaded), and a server that would
 * take it is left out at once, with a reason that names `maxWorkers`.
 */
import type { BudgetMember, NextStart } from './budget-member.js';
import type { WorkerBudget } from './worker-budget.js';

/** What asking for a place came to: held, or refused with the reason the server is left out for. */
export type PlaceAnswer = { held: true } | { held: false; reason: string };

/** One server's place: asked for, then held until `release`. */
export interface ServerPlace {
  /** Settles once the place is held or refused; never rejects. */
  readonly answer: Promise<PlaceAnswer>;
  /** Gives the place back (or stops asking for it); once is enough, more do nothing. */
  release(): void;
}

export class ServerPlaces {
  readonly #budget: WorkerBudget;
  /** Places servers hold now. */
  #held = 0;
  /** Places asked for and not answered yet. */
  readonly #asking = new Set<PlaceRequest>();

  constructor(budget: WorkerBudget) {
    this.#budget = budget;
  }

  /** Places MCP servers hold now (each also counts in the budget's `workers`). */
  get held(): number {
    return this.#held;
  }

  /**
   * Asks for one place for the server `source` (`<config>#<server>`, what its `workers` events
   * name). It is held at once when a place is free and no pool waits, else once room is made.
   */
  take(source: string): ServerPlace {
    const request = new PlaceRequest(source, this.#budget, {
      onHeld: () => {
        this.#held += 1;
        this.#asking.delete(request);
        this.#refuseHopeless();
      },
      onReleased: (wasHeld) => {
        if (wasHeld) this.#held -= 1;
        this.#asking.delete(request);
      },
    });
    if (this.#hopeless()) request.refuse(this.#refusal());
    else {
      this.#asking.add(request);
      request.ask();
    }
    return request;
  }

  /** Whether one more server would take the place kept for packages' calls. */
  #hopeless(): boolean {
    return this.#held + 1 >= this.#budget.limit;
  }

  #refusal(): string {
    const { limit } = this.#budget;
    return (
      `it would take the last of the host's maxWorkers (${limit}) places, which stays for packages' calls ` +
      `(running MCP servers hold ${this.#held}, and are never ended to make room): raise maxWorkers, or unload another config and load this one again`
    );
  }

  /** Servers that asked before the last places went to other servers: none can come now. */
  #refuseHopeless(): void {
    if (!this.#hopeless()) return;
    const reason = this.#refusal();
    for (const request of [...this.#asking]) request.refuse(reason);
  }
}

/** One server's place as the budget sees it: a member with one unit, asked for once, never idle. */
class PlaceRequest implements BudgetMember, ServerPlace {
  readonly source: string;
  readonly answer: Promise<PlaceAnswer>;
  readonly ending = 0;
  readonly idle = 0;
  readonly #budget: WorkerBudget;
  readonly #hooks: { onHeld(): void; onReleased(wasHeld: boolean): void };
  #settle: (answer: PlaceAnswer) => void = () => {};
  #stage: 'new' | 'asking' | 'held' | 'done' = 'new';

  constructor(
    source: string,
    budget: WorkerBudget,
    hooks: { onHeld(): void; onReleased(wasHeld: boolean): void },
  ) {
    this.source = source;
    this.#budget = budget;
    this.#hooks = hooks;
    this.answer = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  get queued(): number {
    return this.#stage === 'asking' ? 1 : 0;
  }

  get occupied(): number {
    return this.#stage === 'held' ? 1 : 0;
  }

  get resting(): boolean {
    return this.#stage !== 'held';
  }

  nextStart(): NextStart {
    return 'place';
  }

  /** The budget gives the place. */
  startNext(): boolean {
    if (this.#stage !== 'asking') return false;
    this.#stage = 'held';
    this.#hooks.onHeld();
    this.#settle({ held: true });
    return true;
  }

  endIdle(): boolean {
    return false;
  }

  ask(): void {
    this.#stage = 'asking';
    this.#budget.join(this);
    this.#budget.changed(this);
  }

  refuse(reason: string): void {
    if (this.#stage === 'held' || this.#stage === 'done') return;
    const joined = this.#stage === 'asking';
    this.#stage = 'done';
    this.#hooks.onReleased(false);
    if (joined) this.#budget.leave(this);
    this.#settle({ held: false, reason });
  }

  release(): void {
    if (this.#stage === 'done') return;
    const { held, joined } = { held: this.#stage === 'held', joined: this.#stage !== 'new' };
    this.#stage = 'done';
    this.#hooks.onReleased(held);
    if (joined) this.#budget.leave(this);
    this.#settle({ held: false, reason: 'its place was given back before it was held' });
  }
}
