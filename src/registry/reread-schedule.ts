/**
 * The re-reads of a declaration whose read ran over its time bound (a busy machine): after 1, 5 and
 * 30 minutes, then never again. Retried with p-retry; the waits go through an injectable
 * {@link Clock} whose default timers are unref'd, so a schedule never keeps a process alive.
 */
import pRetry from 'p-retry';

/** Time as the re-read schedule sees it. Tests pass a fake one to avoid waiting minutes. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      timer.unref();
      signal.addEventListener('abort', onAbort, { once: true });
    }),
};

/** The default waits before each re-read: 1, 5 and 30 minutes. */
export const DEFAULT_REREAD_DELAYS_MS: readonly number[] = [60_000, 300_000, 1_800_000];

class StillTimedOut extends Error {}

export interface RereadHooks {
  /** Reads again; resolves `true` when the read still ran over its time bound. */
  read(): Promise<boolean>;
  /** A re-read is now waiting; it runs at `at` (the clock's time). */
  onScheduled(at: number, attempt: number): void;
  /** The last re-read also ran over: the module stays out. */
  onGiveUp(): void;
}

export class RereadSchedule {
  readonly #controller = new AbortController();
  #nextAt: number | undefined;

  constructor(delaysMs: readonly number[], clock: Clock, hooks: RereadHooks) {
    const { signal } = this.#controller;
    pRetry(
      async (attempt) => {
        // p-retry starts the first attempt synchronously, inside this constructor: let the caller
        // finish storing the schedule before it hears of it.
        await null;
        const delay = delaysMs[attempt - 1] ?? 0;
        this.#nextAt = clock.now() + delay;
        hooks.onScheduled(this.#nextAt, attempt);
        await clock.sleep(delay, signal);
        this.#nextAt = undefined;
        if (await hooks.read()) throw new StillTimedOut();
      },
      // The waits are the clock's, so p-retry itself must not wait between attempts.
      { retries: Math.max(0, delaysMs.length - 1), minTimeout: 0, factor: 1, signal },
    ).then(
      () => {},
      () => {
        this.#nextAt = undefined;
        if (!signal.aborted) hooks.onGiveUp();
      },
    );
  }

  /** When the next re-read runs (the clock's time), or undefined while one is running or none is left. */
  get nextAt(): number | undefined {
    return this.#nextAt;
  }

  cancel(): void {
    this.#nextAt = undefined;
    this.#controller.abort();
  }
}
