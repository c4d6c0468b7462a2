/**
 * A clock for the re-read schedule that only moves when the test says so.
 */
import type { Clock } from '../../dist/src/index.js';

interface Sleeper {
  at: number;
  resolve: () => void;
}

export class ManualClock implements Clock {
  #now = 1_700_000_000_000;
  #sleepers: Sleeper[] = [];
  #waiters: Array<() => void> = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const sleeper: Sleeper = { at: this.#now + ms, resolve };
      this.#sleepers.push(sleeper);
      signal.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((other) => other !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  /** How many sleeps are waiting (a pending re-read is one). */
  get pending(): number {
    return this.#sleepers.length;
  }

  /** Resolves once at least `count` sleeps are waiting. */
  async untilPending(count = 1): Promise<void> {
    while (this.#sleepers.length < count) await new Promise<void>((wake) => this.#waiters.push(wake));
  }

  /** Moves time forward, waking every sleep that is due. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((sleeper) => sleeper.at <= this.#now);
    this.#sleepers = this.#sleepers.filter((sleeper) => sleeper.at > this.#now);
    for (const sleeper of due) sleeper.resolve();
  }
}
