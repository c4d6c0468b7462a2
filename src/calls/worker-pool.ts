/**
 * One piscina pool per trust domain (a tool package, or a single module). Workers start lazily and
 * exit when idle. Every way a call can end (a reply, a timeout, an exit, running out of memory, a
 * crash, a caller's abort, the host closing) becomes exactly one {@link PoolReply} (see
 * {@link PoolCall}); a fault ends only the worker it happened in and piscina replaces it. Nothing a
 * worker sends is read before it is parsed, and no listener or promise chain here can throw.
 *
 * The pool queues its calls; the host's worker budget (worker-budget.ts) hands them to piscina as
 * their turns come (pool-workers.ts runs them there), and reads what this pool occupies from its
 * threads.
 */
import type { CallTask, CapturedLog } from '../boundary/protocol.js';
import type { JsonValue } from '../tool-module.js';
import { failure, type PoolReply } from './answer-once.js';
import type { BudgetMember, NextStart } from './budget-member.js';
import { type CallerSignal, PoolCall, type PoolCallLimits } from './pool-call.js';
import type { PoolThreads } from './pool-threads.js';
import { type PoolLimits, PoolWorkers } from './pool-workers.js';
import { WorkerBudget } from './worker-budget.js';

export type { PoolReply } from './answer-once.js';

export interface PoolCallHooks {
  signal?: CallerSignal | undefined;
  onProgress?: ((data: JsonValue) => void) | undefined;
  /** What the tool printed, as it runs (a task with `forwardLogs`); the rest comes with the reply. */
  onLogs?: ((logs: CapturedLog[]) => void) | undefined;
  /** The call was handed to a worker: it runs, and its timeout counts, from now. */
  onStarted?: (() => void) | undefined;
}

/**
 * Where one trust domain version's calls run: a pool of worker threads in the host, or (the process
 * tier) a pool of processes of its own, one call at a time in each.
 */
export interface CallPool {
  run(task: CallTask, hooks?: PoolCallHooks): Promise<PoolReply>;
  /** Stops taking calls and ends once the calls already running have answered. */
  drain(): Promise<void>;
  /** Ends at once; calls still pending answer `HOST_CLOSED`. */
  close(): Promise<void>;
}

export class TrustDomainPool implements CallPool, BudgetMember {
  readonly #workers: PoolWorkers;
  readonly #threads: PoolThreads<PoolCall>;
  readonly #limits: PoolLimits;
  readonly #callLimits: PoolCallLimits;
  readonly #calls = new Set<PoolCall>();
  /**
   * piscina gets at most two calls per thread: one running and one ready to start the moment the
   * thread is free (handing it over from here, a promise later, leaves the thread asleep in between).
   * The rest wait here.
   */
  readonly #capacity: number;
  readonly #waiting: PoolCall[] = [];
  #dispatched = 0;
  /** The host's worker budget: it starts this pool's calls, in turn with other pools'. */
  readonly #budget: WorkerBudget;
  readonly source: string;
  readonly #idleWaiters: Array<() => void> = [];
  /** No new calls (draining or destroyed). */
  #closed = false;
  /** Workers ended: nothing may start any more. */
  #destroyed = false;

  /**
   * `budget`: the host's worker budget, shared by every pool, and the package this pool runs (none:
   * a budget of this pool's own, for a pool used alone).
   */
  constructor(
    limits: PoolLimits,
    onFault: (message: string) => void,
    membership: { budget: WorkerBudget; source: string } = {
      budget: new WorkerBudget(Number.POSITIVE_INFINITY),
      source: '',
    },
  ) {
    this.#limits = limits;
    this.#budget = membership.budget;
    this.source = membership.source;
    this.#callLimits = {
      heapMb: limits.heapMb,
      timeoutGraceMs: limits.timeoutGraceMs,
      maxResultBytes: limits.call.maxResultBytes,
      maxLogChars: limits.call.maxLogChars,
    };
    this.#capacity = limits.maxThreads * 2;
    this.#workers = new PoolWorkers(limits, {
      onFault,
      onChange: () => this.#budget.changed(this),
      requeue: (call) => this.#requeue(call),
      queued: () => this.queued,
    });
    this.#threads = this.#workers.threads;
    this.#budget.join(this);
  }

  /** Calls waiting for a worker or running now. */
  get pendingCalls(): number {
    return this.#calls.size;
  }

  run(task: CallTask, hooks: PoolCallHooks = {}): Promise<PoolReply> {
    if (this.#closed) return Promise.resolve(failure('HOST_CLOSED', 'the tool host is closed'));
    return new Promise<PoolReply>((resolve) => {
      const onCallerAbort = () => call.callerAborted();
      const call: PoolCall = new PoolCall({
        task,
        limits: this.#callLimits,
        onProgress: hooks.onProgress,
        onLogs: hooks.onLogs,
        maxLogChars: this.#callLimits.maxLogChars,
        onStarted: hooks.onStarted,
        queue: this.#workers.pipeline,
        resolve,
        onAnswered: () => {
          hooks.signal?.removeEventListener('abort', onCallerAbort);
          this.#calls.delete(call);
          this.#threads.forget(call, call.worker);
          // A call answered while it waited (aborted, the host closing) may end this pool's turn.
          if (this.#waiting.includes(call)) {
            this.#budget.changed(this);
            this.#maybeIdle();
          }
        },
      });
      this.#calls.add(call);
      if (hooks.signal?.aborted) {
        call.callerAborted();
        return;
      }
      hooks.signal?.addEventListener('abort', onCallerAbort, { once: true });
      // The fast path: an idle worker of its own and nothing waiting, here or for the budget. The
      // call takes that worker (what the pool occupies doesn't change), without the budget's pass.
      if (this.queued === 0 && this.#budget.quiet && this.#threads.idle > 0) {
        this.#budget.startedOnOwnUnit(this);
        this.#dispatched += 1;
        this.#dispatch(call);
        return;
      }
      this.#waiting.push(call);
      this.#budget.changed(this);
    });
  }

  get queued(): number {
    while (this.#waiting[0]?.answered === true) this.#waiting.shift();
    return this.#destroyed ? 0 : this.#waiting.length;
  }

  get occupied(): number {
    // A call queued behind a running one (pipeline.ts) takes no thread of its own.
    const needThreads = this.#dispatched - this.#workers.pipeline.size;
    const threads = Math.max(this.#threads.running, Math.min(needThreads, this.#limits.maxThreads));
    return threads + this.#threads.ending + this.#threads.stranded;
  }

  get ending(): number {
    return this.#threads.ending;
  }

  get idle(): number {
    return this.#threads.idle;
  }

  get resting(): boolean {
    return this.#dispatched === 0;
  }

  nextStart(contended: boolean): NextStart {
    // A ready worker with nothing to run: piscina hands it the call at once.
    if (this.#threads.idle > 0) return 'now';
    // piscina starts a worker for a call it can't hand out at once, up to its maximum (even while
    // one is starting): below it, the call may cost a place.
    if (this.#threads.running < this.#limits.maxThreads) return 'place';
    // Every thread is busy: piscina may hold one more call per thread (see #capacity), unless another
    // pool waits for a place (that call would run before its turn) or a thread is still ending
    // (piscina would start its replacement beside it).
    const prefetch = !contended && this.#threads.ending + this.#threads.stranded === 0;
    return prefetch && this.#dispatched < this.#capacity ? 'now' : 'wait';
  }

  startNext(): boolean {
    if (this.queued === 0) return false;
    const call = this.#waiting.shift() as PoolCall;
    this.#dispatched += 1;
    this.#dispatch(call);
    return true;
  }

  endIdle(): boolean {
    return this.#threads.endIdleWorker();
  }

  #dispatch(call: PoolCall): void {
    if (call.answered) {
      // Aborted by its caller or the host closed while it waited: it never reaches a worker.
      this.#release();
      return;
    }
    this.#workers.run(call, () => this.#release());
  }

  /**
   * A call taken back from the busy worker it was queued on: it waits again, first in line, for a
   * worker the budget gives it (so it never makes piscina start one beyond the budget).
   */
  #requeue(call: PoolCall): void {
    this.#dispatched -= 1;
    this.#waiting.unshift(call);
    this.#budget.changed(this);
  }

  /** A call left piscina: the budget gives the next turn (this pool's next call, or another pool's). */
  #release(): void {
    this.#dispatched -= 1;
    this.#budget.changed(this);
    this.#maybeIdle();
  }

  #maybeIdle(): void {
    if (this.#dispatched === 0 && this.queued === 0)
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /**
   * Ends every worker; calls still pending answer `HOST_CLOSED`. Resolves once the workers have
   * ended, or been let go (a worker blocked in a system call can't be ended; see thread-reaper).
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#destroyed = true;
    for (const call of [...this.#calls]) call.hostClosed();
    this.#budget.leave(this);
    await this.#workers.end('destroy');
  }

  /** Stops taking calls and ends the workers once the calls already running have answered. */
  async drain(): Promise<void> {
    this.#closed = true;
    // Calls already waiting still run: they were taken before the pool stopped taking calls.
    if (this.#dispatched > 0 || this.queued > 0)
      await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    if (this.#destroyed) return;
    this.#budget.leave(this);
    await this.#workers.end('close');
  }
}
