/**
 * The piscina pool of one trust domain and the threads it runs: made with the pool's limits, its
 * `'error'` always heard, woken when calls would be left stranded behind a removed worker, and each
 * call handed to it run to exactly one end (a reply or a rejection, parsed by {@link PoolCall}).
 * Which call goes to piscina, and when, is the trust domain pool's (worker-pool.ts) and the budget's.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import { type CallSettings, type CallTask, callTmpDir } from '../boundary/protocol.js';
import { workersFile } from '../own-files.js';
import { failure } from './answer-once.js';
import { Pipeline } from './pipeline.js';
import { piscina } from './piscina.js';
import type { PoolCall } from './pool-call.js';
import { PoolThreads, tagTask } from './pool-threads.js';
import { ensureEnded } from './thread-reaper.js';

/** The bounds and settings of a trust domain's worker pool. */
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
}

/** CommonJS, handing piscina the call worker's handler: see workers/call/entry.cts. */
const CALL_WORKER = fileURLToPath(workersFile('call/entry.cjs'));

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

export class PoolWorkers {
  readonly threads: PoolThreads<PoolCall>;
  /** Calls queued on busy workers; a call's `queue` for withdrawing it. */
  readonly pipeline: Pipeline<PoolCall>;
  readonly #piscina: Piscina;
  readonly #limits: PoolLimits;
  readonly #queuedHere: () => number;
  /** Calls handed to piscina that have not left it. */
  readonly #inPiscina = new Set<PoolCall>();
  /** Workers ended: nothing may start any more. */
  #destroyed = false;

  /**
   * `onChange`: a worker started, was told to end, was let go or exited (what the budget counts);
   * `requeue`: a call taken back from a busy worker goes back to the front of its pool's queue.
   */
  constructor(
    limits: PoolLimits,
    options: {
      onFault: (message: string) => void;
      onChange: () => void;
      requeue: (call: PoolCall) => void;
      /** How many of the pool's calls wait for their turn (not yet given to piscina). */
      queued: () => number;
    },
  ) {
    const { onFault, onChange } = options;
    this.#limits = limits;
    this.#queuedHere = options.queued;
    this.pipeline = new Pipeline<PoolCall>(2 * limits.maxThreads, {
      rerun: (call) => {
        this.#inPiscina.delete(call);
        call.requeued();
        options.requeue(call);
      },
      skipping: (call, worker, change) => {
        if (change === 1) this.threads.forget(call, worker);
        this.threads.skipping(worker, change);
        // Skipped, the worker is free again: what waits for one may start.
        if (change === -1) onChange();
      },
    });
    this.threads = new PoolThreads<PoolCall>({
      maxThreads: limits.maxThreads,
      queueBehind: (call, ahead, worker) => this.pipeline.queue(call, ahead, worker),
      maxLogChars: limits.call.maxLogChars,
      onFault,
      onWorkerGone: () => {
        // A worker that ended between calls (a fault outside any call) leaves calls queued behind it.
        this.#unstrand();
        // Its place is free: a call queued behind a running one moves there (through the budget).
        if (this.pipeline.size > 0 && !this.#destroyed) this.pipeline.stealOne();
        onChange();
      },
      onChange,
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
        claims: this.pipeline.buffer,
        ...limits.call,
      },
      recordTiming: false,
      loadBalancer: this.threads.balance as never,
    });
    this.threads.attach(this.#piscina);
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
    if (this.threads.anyReady) return;
    const waiting = new Set(this.threads.waiting.map((listener) => listener.taskId));
    for (const call of this.#inPiscina) {
      if (!waiting.has(call.taskId)) continue;
      call.answer(failure('TOOL_CRASHED', `the tool's worker could not start: ${message}`));
      call.kill.abort();
    }
  }

  /**
   * Hands `call` to piscina; `onLeft` runs once, when it has left piscina however it ended. A call
   * taken back from the worker it was queued on (pipeline.ts) is handed again: what its earlier task
   * brings back (the worker's skip, or its end) is dropped.
   */
  run(call: PoolCall, onLeft: () => void): void {
    this.#inPiscina.add(call);
    this.threads.expect(call);
    const attempt = call.attempt;
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
        if (call.attempt !== attempt) {
          this.pipeline.taskLeft(call, attempt);
          return;
        }
        try {
          call.replied(value);
        } catch (error) {
          failedToHandle(call, error);
        }
        this.#left(call, false, onLeft);
      },
      (error: unknown) => {
        if (call.attempt !== attempt) {
          this.pipeline.taskLeft(call, attempt);
          return;
        }
        try {
          // Queued and never started: its worker ended under the call ahead of it. It runs again
          // (from its pool's queue); this task has left.
          if (this.pipeline.withdraw(call, true)) {
            this.pipeline.taskLeft(call, attempt);
            this.#unstrand();
            return;
          }
          call.rejected(error);
          this.#unstrand();
        } catch (caught) {
          failedToHandle(call, caught);
        }
        this.#left(call, true, onLeft);
      },
    );
  }

  /** A call left piscina (`lost`: its task was rejected): its grace, temp dir and place are let go. */
  #left(call: PoolCall, lost: boolean, onLeft: () => void): void {
    this.#inPiscina.delete(call);
    try {
      call.settled();
      this.pipeline.settled(call);
      this.pipeline.aheadLeft(call, !lost && !call.kill.aborted);
      // A worker that ended mid-call (killed, exited, out of memory) could not remove the call's
      // temp dir itself.
      if (lost || call.kill.aborted) {
        void rm(callTmpDir(this.#limits.call, call.task), {
          recursive: true,
          force: true,
          maxRetries: 2,
        }).catch(() => {});
      }
      // A worker fell idle while a call waits queued on a busy one: that call moves to it. With no
      // other call of the pool waiting, before the budget hears of the idle worker (it may end it
      // for another pool); otherwise the pool's next call takes it, and nothing moves.
      if (this.#queuedHere() === 0) this.#steal();
      onLeft();
      this.#steal();
    } catch {
      // Nothing here throws by design; a throw must still not become an unhandled rejection.
    }
  }

  #steal(): void {
    if (this.pipeline.size > 0 && this.threads.idle > 0 && this.#piscina.queueSize === 0)
      this.pipeline.stealOne();
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
      // Starting a worker can throw at once (as in run); this runs where nothing would catch it.
    }
  }

  /**
   * Ends every worker now (`destroy`) or once piscina has nothing left to run (`close`). Resolves
   * once the workers have ended, or been let go (a worker blocked in a system call can't be ended;
   * see thread-reaper).
   */
  async end(how: 'destroy' | 'close'): Promise<void> {
    this.#destroyed = true;
    const workers = this.threads.workers;
    const ended = (how === 'destroy' ? this.#piscina.destroy() : this.#piscina.close()).catch(() => {});
    await Promise.race([ended, Promise.all(workers.map((worker) => ensureEnded(worker)))]);
  }
}
