/**
 * One piscina pool per trust domain (a tool package, or a single module). Workers start lazily and
 * exit when idle. Every way a call can end (a reply, a timeout, an exit, running out of memory, a
 * crash, a caller's abort, the host closing) becomes exactly one {@link PoolReply} (see
 * {@link PoolCall}); a fault ends only the worker it happened in and piscina replaces it. Nothing a
 * worker sends is read before it is parsed, and no listener or promise chain here can throw.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import { type CallSettings, type CallTask, type CapturedLog, callTmpDir } from '../boundary/protocol.js';
import type { JsonValue } from '../tool-module.js';
import { failure, type PoolReply } from './answer-once.js';
import { piscina } from './piscina.js';
import { PoolCall, type PoolCallLimits } from './pool-call.js';
import { PoolThreads, tagTask } from './pool-threads.js';
import { ensureEnded } from './thread-reaper.js';
import { type BudgetMember, type NextStart, WorkerBudget } from './worker-budget.js';

export type { PoolReply } from './answer-once.js';

/** CommonJS, handing piscina the call worker's handler: see workers/call/entry.cts. */
const CALL_WORKER = fileURLToPath(new URL('../../workers/call/entry.cjs', import.meta.url));

export interface PoolLimits {
  maxThreads: number;
  idleTimeoutMs: number;
  heapMb: number;
  stackMb: number;
  timeoutGraceMs: number;
  env: Record<string, string>;
  execArgv: string[];
  allowAddons: boolean;
  /** What every call of this pool shares; handed to each worker once, as its `workerData`. */
  call: CallSettings;
  /** The process tier without a sandbox: its workers run under strict's flags, and say so. */
  permissionTier?: 'process';
}

export interface PoolCallHooks {
  signal?: AbortSignal | undefined;
  onProgress?: ((data: JsonValue) => void) | undefined;
  /** What the tool printed, as it runs (a task with `forwardLogs`); the rest comes with the reply. */
  onLogs?: ((logs: CapturedLog[]) => void) | undefined;
  /** The call was handed to a worker: it runs, and its timeout counts, from now. */
  onStarted?: (() => void) | undefined;
}

/**
 * Where one trust domain version's calls run: a pool of worker threads in the host, or (the process
 * tier) a process of its own running such a pool.
 */
export interface CallPool {
  run(task: CallTask, hooks?: PoolCallHooks): Promise<PoolReply>;
  /** Stops taking calls and ends once the calls already running have answered. */
  drain(): Promise<void>;
  /** Ends at once; calls still pending answer `HOST_CLOSED`. */
  close(): Promise<void>;
}

/** A task that only makes piscina start a worker (see #unstrand). */
const WAKE_TASK: CallTask = {
  kind: 'wake',
  taskId: '',
  callId: '',
  sessionId: '',
  moduleUrl: '',
  args: null,
  withheld: [],
  timeoutMs: 1,
};

/** The host's own failure while it handled a call's end: that call answers it (never a throw). */
function failedToHandle(call: PoolCall, error: unknown): void {
  try {
    call.answer(failure('TOOL_CRASHED', `toolhost failed to handle the reply: ${String(error)}`));
  } catch {
    // Answering is all this can do; it must not become an unhandled rejection of the host.
  }
}

export class TrustDomainPool implements CallPool, BudgetMember {
  readonly #piscina: Piscina;
  readonly #limits: PoolLimits;
  readonly #callLimits: PoolCallLimits;
  readonly #threads: PoolThreads;
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
   * a budget of this pool's own, as in a package process, which is what the host's budget counts).
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
    this.#threads = new PoolThreads({
      maxLogChars: limits.call.maxLogChars,
      onFault,
      onWorkerGone: () => {
        // A worker that ended between calls (a fault outside any call) leaves calls queued behind it.
        this.#unstrand();
        this.#budget.changed(this);
      },
      onChange: () => this.#budget.changed(this),
    });
    this.#piscina = new (piscina().Piscina)({
      filename: CALL_WORKER,
      minThreads: 0,
      maxThreads: limits.maxThreads,
      idleTimeout: limits.idleTimeoutMs,
      resourceLimits: {
        maxOldGenerationSizeMb: limits.heapMb,
        maxYoungGenerationSizeMb: Math.min(32, limits.heapMb),
        stackSizeMb: limits.stackMb,
      },
      env: limits.env,
      execArgv: limits.execArgv,
      workerData: {
        allowAddons: limits.allowAddons,
        ...limits.call,
        ...(limits.permissionTier === undefined ? {} : { permissionTier: limits.permissionTier }),
      },
      recordTiming: false,
      loadBalancer: this.#threads.balance as never,
    });
    this.#threads.attach(this.#piscina);
    this.#budget.join(this);
    // Unheard, a pool 'error' (a worker failing between tasks, or a message piscina didn't expect)
    // would crash the host.
    this.#piscina.on('error', (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      onFault(`a worker failed outside any call: ${message}`);
      this.#failIfNoWorkerStarts(message);
    });
  }

  /**
   * A worker that fails while it starts (a strict tier that can't read what the worker needs, say)
   * takes no call, and piscina may start no other: with no worker running, the calls waiting for one
   * would wait forever (and a process holding nothing else would exit under them). They answer.
   */
  #failIfNoWorkerStarts(message: string): void {
    if (this.#threads.anyReady) return;
    for (const listener of this.#threads.waiting) {
      const call = [...this.#calls].find((candidate) => candidate.taskId === listener.taskId);
      if (call === undefined) continue;
      call.answer(failure('TOOL_CRASHED', `the tool's worker could not start: ${message}`));
      call.kill.abort();
    }
  }

  /**
   * Starts one worker now if none runs, to take the first call without a worker's start (a spare
   * package process, see process/spares.ts). It runs toolhost's call worker only, no tool code.
   */
  prestart(): void {
    if (this.#destroyed || this.#piscina.threads.length > 0) return;
    try {
      this.#piscina.run(WAKE_TASK).catch(() => {});
    } catch {
      // Starting a worker can throw at once; the first call then starts one as usual.
    }
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
      this.#waiting.push(call);
      this.#budget.changed(this);
    });
  }

  get queued(): number {
    while (this.#waiting[0]?.answered === true) this.#waiting.shift();
    return this.#destroyed ? 0 : this.#waiting.length;
  }

  get occupied(): number {
    const threads = Math.max(this.#threads.running, Math.min(this.#dispatched, this.#limits.maxThreads));
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
    const running = this.#threads.running;
    if (this.#dispatched < running) return 'now';
    if (running < this.#limits.maxThreads) return 'place';
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
    this.#threads.expect(call);
    let running: Promise<unknown>;
    try {
      running = this.#piscina.run(tagTask(call.task), { signal: call.kill });
    } catch (error) {
      running = Promise.reject(error);
    }
    // One `then` per call, not a chain of four promises: both handlers are total (nothing they call
    // can reject the promise `then` makes), and each ends the call's time in piscina.
    running.then(
      (value) => {
        try {
          call.replied(value);
        } catch (error) {
          failedToHandle(call, error);
        }
        this.#left(call, false);
      },
      (error: unknown) => {
        try {
          call.rejected(error);
          this.#unstrand();
        } catch (caught) {
          failedToHandle(call, caught);
        }
        this.#left(call, true);
      },
    );
  }

  /** A call left piscina (`lost`: its task was rejected): its grace, temp dir and place are let go. */
  #left(call: PoolCall, lost: boolean): void {
    try {
      call.settled();
      // A worker that ended mid-call (killed, exited, out of memory) could not remove the call's
      // temp dir itself.
      if (lost || call.kill.aborted) {
        void rm(callTmpDir(this.#limits.call, call.task), {
          recursive: true,
          force: true,
          maxRetries: 2,
        }).catch(() => {});
      }
      this.#release();
    } catch {
      // Nothing here throws by design; a throw must still not become an unhandled rejection.
    }
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
   * piscina 5 with `minThreads: 0` replaces a removed worker (terminated at a timeout, exited, out of
   * memory) only up to `minThreads`: calls queued behind it would wait for the next `run`. A wake
   * task makes it start a worker, which takes the queued calls first.
   */
  #unstrand(): void {
    if (this.#destroyed || this.#piscina.queueSize === 0) return;
    if (this.#piscina.threads.length >= this.#limits.maxThreads) return;
    try {
      this.#piscina.run(WAKE_TASK).catch(() => {});
    } catch {
      // Starting a worker can throw at once (as in #dispatch); this runs where nothing would catch it.
    }
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
    const workers = this.#threads.workers;
    const destroyed = this.#piscina.destroy().catch(() => {});
    await Promise.race([destroyed, Promise.all(workers.map((worker) => ensureEnded(worker)))]);
  }

  /** Stops taking calls and ends the workers once the calls already running have answered. */
  async drain(): Promise<void> {
    this.#closed = true;
    // Calls already waiting still run: they were taken before the pool stopped taking calls.
    if (this.#dispatched > 0 || this.queued > 0)
      await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    if (this.#destroyed) return;
    this.#budget.leave(this);
    const workers = this.#threads.workers;
    const closed = this.#piscina.close().catch(() => {});
    await Promise.race([closed, Promise.all(workers.map((worker) => ensureEnded(worker)))]);
  }
}
