/**
 * The processes of one process-tier pool, by what each is doing: starting, idle, holding a call or
 * being ended. The pool asks them which process takes the next call, which one is ended first to
 * make room, and whether any still holds a call; an idle one is ended after `idleTimeoutMs`.
 */
import type { Live } from './pool-process.js';
import type { ProcessCall } from './process-call.js';

/** Ready, holding no call and waiting for none, not being ended. */
function isIdle(live: Live): boolean {
  return live.ready && live.holding === undefined && live.first === undefined && !live.child.ending;
}

/** The processes of one pool, started and not yet gone; iterating gives each one. */
export class PoolLives implements Iterable<Live> {
  /** Processes started that have not ended (those being ended too, until they are gone). */
  readonly #lives = new Set<Live>();
  readonly #idleTimeoutMs: number;

  constructor(idleTimeoutMs: number) {
    this.#idleTimeoutMs = idleTimeoutMs;
  }

  [Symbol.iterator](): Iterator<Live> {
    return this.#lives[Symbol.iterator]();
  }

  get size(): number {
    return this.#lives.size;
  }

  add(live: Live): void {
    this.#lives.add(live);
  }

  has(live: Live): boolean {
    return this.#lives.has(live);
  }

  /** Forgets `live`; false when it was already gone. */
  delete(live: Live): boolean {
    return this.#lives.delete(live);
  }

  /** Processes being ended. */
  get ending(): number {
    let count = 0;
    for (const live of this.#lives) if (live.child.ending) count += 1;
    return count;
  }

  /** Processes not being ended. */
  get working(): number {
    return this.#lives.size - this.ending;
  }

  get idle(): number {
    let count = 0;
    for (const live of this.#lives) if (isIdle(live)) count += 1;
    return count;
  }

  /** No process holds a call or waits to be sent one. */
  get resting(): boolean {
    for (const live of this.#lives) if (live.holding !== undefined || live.first !== undefined) return false;
    return true;
  }

  /** The process that holds `call` (sent it, and not given it back), if any. */
  holder(call: ProcessCall): Live | undefined {
    for (const live of this.#lives) if (live.holding === call) return live;
    return undefined;
  }

  /**
   * Of the processes with nothing to do, the one idle longest (the first to end) or the shortest time
   * (the next call's, so that a pool busier a while ago than now lets its other processes reach
   * `idleTimeoutMs`).
   */
  idlest(which: 'longest' | 'shortest'): Live | undefined {
    const sign = which === 'longest' ? 1 : -1;
    let found: Live | undefined;
    for (const live of this.#lives) {
      if (isIdle(live) && (found === undefined || sign * (found.idleSince - live.idleSince) > 0))
        found = live;
    }
    return found;
  }

  /** A process starting for a call that was answered before it was ready. */
  starting(): Live | undefined {
    for (const live of this.#lives) {
      if (!live.ready && !live.child.ending && live.first === undefined) return live;
    }
    return undefined;
  }

  /** `live` has nothing to do: it is ended after `idleTimeoutMs` unless a call comes first. */
  rest(live: Live): void {
    if (!isIdle(live)) return;
    live.idleSince = performance.now();
    live.child.busy = false;
    clearTimeout(live.idleTimer);
    live.idleTimer = setTimeout(
      () => live.child.kill({ cause: 'ended', message: 'was idle' }),
      this.#idleTimeoutMs,
    );
    live.idleTimer.unref();
  }
}
