/**
 * The rate of a server's re-lists: `notifications/tools/list_changed` asks for one, and it runs at
 * most once per {@link RELIST_INTERVAL_MS} (from the last list, a start's included). Asked for
 * while one waits or runs, it runs once more after it: a flood of notifications costs one re-list
 * per interval, and the last change is always read.
 */

/** Tools are read again at most this often after `list_changed`. */
export const RELIST_INTERVAL_MS = 1000;

export class RelistLimiter {
  #lastAt = 0;
  /** A re-list waits for its turn or runs. */
  #busy = false;
  /** The re-list asked for meanwhile, run once the current one is done. */
  #next: (() => Promise<void>) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** A list was just read (at a start): the next re-list waits a whole interval from now. */
  listedNow(): void {
    this.#lastAt = Date.now();
  }

  /** Runs `relist` once the interval since the last list has passed (it must not reject). */
  ask(relist: () => Promise<void>): void {
    if (this.#closed) return;
    if (this.#busy) {
      this.#next = relist;
      return;
    }
    this.#busy = true;
    const wait = Math.max(0, this.#lastAt + RELIST_INTERVAL_MS - Date.now());
    this.#timer = setTimeout(async () => {
      this.#lastAt = Date.now();
      await relist();
      this.#busy = false;
      const next = this.#next;
      this.#next = undefined;
      if (next !== undefined) this.ask(next);
    }, wait);
    this.#timer.unref();
  }

  /** No re-list runs from now on. */
  close(): void {
    this.#closed = true;
    this.#next = undefined;
    clearTimeout(this.#timer);
  }
}
