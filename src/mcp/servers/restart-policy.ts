/**
 * When a server that ended is restarted: after a backoff that doubles with each end, unless it has
 * ended too often lately, when it is left out for good.
 */

/** How often a server may end before it is left out: this many ends within {@link DEATH_WINDOW_MS}. */
export const MAX_DEATHS = 5;
export const DEATH_WINDOW_MS = 10 * 60_000;
/** The first restart's delay; each next one doubles, up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 10_000;

export class RestartPolicy {
  readonly #deaths: number[] = [];

  /**
   * Counts one end, now: the delay before the restart, or `give-up` with the count of ends in
   * the window, once it reaches {@link MAX_DEATHS}.
   */
  ended(now: number): { restartInMs: number } | { giveUp: string } {
    this.#deaths.push(now);
    while ((this.#deaths[0] ?? now) < now - DEATH_WINDOW_MS) this.#deaths.shift();
    const count = this.#deaths.length;
    if (count >= MAX_DEATHS)
      return { giveUp: `it ended ${count} times within ${DEATH_WINDOW_MS / 60_000} minutes` };
    return { restartInMs: Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (count - 1)) };
  }
}
