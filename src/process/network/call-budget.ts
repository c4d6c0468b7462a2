/**
 * The bytes a package's calls may move through its egress proxy. The proxy serves a package, not a
 * call: every connection comes from the package's processes through the same socket, and a
 * connection a process's agents keep alive is reused by its next call, so no byte can be told apart
 * by call. Bytes are therefore charged by time: each call the host says is in flight is charged every
 * byte the package moves from when it began until it ends, its concurrent calls' bytes included.
 * That never undercounts a call, and a call alone is charged exactly its own traffic.
 *
 * The host says when a call begins and ends (never the child, which the tool runs in). Between calls
 * the bytes still moving on open connections (a response a call did not read, a tool's timer) are
 * charged to the time between calls, which has the same budget; the proxy also refuses new
 * connections then (see proxy-server.ts).
 */

/** Something the budget can stop at once and close: a tunnel, or one forwarded request. */
export interface Link {
  /** Reads nothing more (its data waits) until it is closed. */
  hold(): void;
  destroy(): void;
}

/** What the budget tells the host: a call, or the time between calls, moved more than its limit. */
export interface BudgetOver {
  /** The call that ran over; absent for the time between calls. */
  taskId?: string;
  /** What it was charged, the chunk that went over included. */
  bytes: number;
  limit: number;
}

export class CallBudget {
  readonly #limit: number;
  readonly #onOver: (over: BudgetOver) => void;
  /** Every byte charged so far. */
  #total = 0;
  /** The calls in flight and the total when each began, oldest first (a Map keeps that order). */
  readonly #calls = new Map<string, number>();
  /** The total when the last call in flight ended. */
  #idleFrom = 0;
  readonly #links = new Set<Link>();
  /** The links held for a call that ran over, closed once the host has answered it. */
  readonly #held = new Map<string, Link[]>();
  /** An MCP server's budget: connections are taken between calls too (see {@link running}). */
  readonly #alwaysOpen: boolean;

  constructor(options: {
    limit: number;
    running: Iterable<string>;
    onOver(over: BudgetOver): void;
    alwaysOpen?: boolean | undefined;
  }) {
    this.#limit = options.limit;
    this.#onOver = options.onOver;
    this.#alwaysOpen = options.alwaysOpen === true;
    for (const taskId of options.running) this.#calls.set(taskId, 0);
  }

  /**
   * Whether a call of the package is in flight: the proxy takes new connections only then. An MCP
   * server's budget (`alwaysOpen`) is always running: a server lives between calls (it may connect
   * while it starts, or keep a connection of its own), and the time between its calls is bounded by
   * the same byte budget as each call.
   */
  get running(): boolean {
    return this.#alwaysOpen || this.#calls.size > 0;
  }

  begin(taskId: string): void {
    if (!this.#calls.has(taskId)) this.#calls.set(taskId, this.#total);
  }

  end(taskId: string): void {
    this.#calls.delete(taskId);
    if (this.#calls.size === 0) this.#idleFrom = this.#total;
    // The call is given back: what was held for it goes now, answered or not.
    this.cut(taskId);
  }

  /** The host answered a call that ran over: its held links close. */
  cut(taskId: string): void {
    for (const link of this.#held.get(taskId) ?? []) link.destroy();
    this.#held.delete(taskId);
  }

  /** Counts a link while it is open; call what it returns when it closes. */
  add(link: Link): () => void {
    this.#links.add(link);
    return () => this.#links.delete(link);
  }

  /**
   * Charges `bytes` a link is about to move. False: they must not move, since a budget ran out and
   * every open link was held (a call: closed once the host has answered it, so the call's error is
   * the limit and not the tool's reaction to a cut connection) or closed (between calls).
   */
  charge(bytes: number): boolean {
    this.#total += bytes;
    const oldest = this.#calls.entries().next();
    if (!oldest.done) {
      const [taskId, from] = oldest.value;
      if (this.#total - from <= this.#limit) return true;
      // Charged no more: the call is answered now, whatever its tool still does.
      this.#calls.delete(taskId);
      if (this.#calls.size === 0) this.#idleFrom = this.#total;
      const links = [...this.#links];
      for (const link of links) link.hold();
      this.#held.set(taskId, links);
      this.#onOver({ taskId, bytes: this.#total - from, limit: this.#limit });
      return false;
    }
    const idle = this.#total - this.#idleFrom;
    if (idle <= this.#limit) return true;
    this.#idleFrom = this.#total;
    for (const link of [...this.#links]) link.destroy();
    this.#onOver({ bytes: idle, limit: this.#limit });
    return false;
  }
}
