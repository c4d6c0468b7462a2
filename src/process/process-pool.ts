/**
 * The process tier's pool for one package version: the calls run in a process of the package's own
 * (see domain-child.ts), which runs the same pool of worker threads the worker tier runs in the host.
 * The host queues the calls; the host's worker budget (worker-budget.ts) starts the process and
 * sends it calls as their turns come, at most one per thread, so a call sent starts at once;
 * deadlines are the host's ({@link ProcessCall}). What the process holds is sent-calls.ts's. When
 * the process dies, however it dies, the calls it was running answer (`TOOL_OUT_OF_MEMORY` when its
 * memory limit killed it, `TOOL_CRASHED` otherwise), and the next call starts a new process. An idle
 * process ends after `idleTimeoutMs`, or sooner when the budget needs its place for another package.
 * A package held to hosts has its egress proxy told when each call is sent and given back: that is
 * what its bytes per call are charged by, and a call that runs over answers `TOOL_ACCESS_DENIED`.
 */
import type { CallTask } from '../boundary/protocol.js';
import { failure, type PoolReply } from '../calls/answer-once.js';
import type { BudgetMember, NextStart } from '../calls/budget-member.js';
import { WorkerBudget } from '../calls/worker-budget.js';
import type { CallPool, PoolCallHooks } from '../calls/worker-pool.js';
import type { ChildEnd, DomainChild } from './domain-child.js';
import { type Live, type LiveOptions, startLive } from './pool-process.js';
import { ProcessCall } from './process-call.js';
import { answerFor, SentCalls } from './sent-calls.js';

export interface ProcessPoolOptions extends LiveOptions {
  onFault: (message: string) => void;
  /** The host's worker budget, where the package's process counts one. @default a budget of its own */
  budget?: WorkerBudget;
  /** The package, for the budget's events. */
  source?: string;
}

export class ProcessDomainPool implements CallPool, BudgetMember {
  readonly #options: ProcessPoolOptions;
  readonly #sent: SentCalls;
  readonly #calls = new Set<ProcessCall>();
  readonly #queue: ProcessCall[] = [];
  #live: Live | undefined;
  #idle: NodeJS.Timeout | undefined;
  /** Drains waiting for every call to be answered and given back. */
  readonly #drained: Array<() => void> = [];
  /** Waiting for the process to be gone. */
  readonly #gone: Array<() => void> = [];
  #closed = false;
  /** Whether this pool has had the spares replenished (once, after its first calls were answered). */
  #replenished = false;
  /** Processes started that have not ended (a second one while the first is being ended). */
  readonly #alive = new Set<Live>();
  /** The host's worker budget: it starts this pool's process and calls, in turn with other pools'. */
  readonly #budget: WorkerBudget;
  readonly source: string;

  constructor(options: ProcessPoolOptions) {
    this.#options = options;
    this.#budget = options.budget ?? new WorkerBudget(Number.POSITIVE_INFINITY);
    this.source = options.source ?? '';
    this.#sent = new SentCalls({
      egress: options.egress,
      onFault: options.onFault,
      timeoutGraceMs: options.limits.timeoutGraceMs,
      call: options.limits.call,
      onGivenBack: () => this.#pump(),
    });
    options.egress?.watchCalls((taskId, message) => this.#overBudget(taskId, message));
    this.#budget.join(this);
  }

  get queued(): number {
    while (this.#queue[0]?.answered === true) this.#queue.shift();
    return this.#queue.length;
  }

  get occupied(): number {
    return this.#alive.size;
  }

  get ending(): number {
    let count = 0;
    for (const live of this.#alive) if (live.child.ending) count += 1;
    return count;
  }

  get idle(): number {
    const live = this.#current;
    return live?.ready === true && live.holding.size === 0 && live.first === undefined ? 1 : 0;
  }

  get resting(): boolean {
    const live = this.#current;
    return live === undefined || (live.holding.size === 0 && live.first === undefined);
  }

  nextStart(): NextStart {
    const live = this.#current;
    if (live === undefined) {
      const { spares, egress, limits, paths } = this.#options;
      // A package held to hosts gets its proxy bound when its process starts: no spare has it.
      return egress === undefined && spares?.fits(limits, paths) === true ? 'spare' : 'place';
    }
    return live.ready && live.holding.size < this.#options.limits.maxThreads ? 'now' : 'wait';
  }

  /** Sends the next waiting call to the process, or (with none) starts the process it will run on. */
  startNext(): boolean {
    if (this.queued === 0) return false;
    const live = this.#current;
    const call = this.#queue.shift() as ProcessCall;
    if (live === undefined) {
      // The turn is this call's: the new process is not idle (nor ended to make room) until it has it.
      const spawned = this.#spawn();
      spawned.child.busy = true;
      spawned.first = call;
      return true;
    }
    if (!live.ready) {
      this.#queue.unshift(call);
      return false;
    }
    this.#dispatchTo(live, call);
    return true;
  }

  endIdle(): boolean {
    const live = this.#current;
    if (live === undefined || this.idle === 0) return false;
    live.child.kill({ cause: 'ended', message: 'was ended to make room for another package' });
    return true;
  }

  /** The process calls go to: not one being ended (it still answers what it holds, but takes nothing new). */
  get #current(): Live | undefined {
    return this.#live?.child.ending === true ? undefined : this.#live;
  }

  run(task: CallTask, hooks: PoolCallHooks = {}): Promise<PoolReply> {
    if (this.#closed) return Promise.resolve(failure('HOST_CLOSED', 'the tool host is closed'));
    return new Promise<PoolReply>((resolve) => {
      const onCallerAbort = () => {
        call.answer(failure('CALL_ABORTED', 'the call was aborted by its caller'));
        this.#live?.child.send({ type: 'cancel', taskId: task.taskId });
      };
      const call: ProcessCall = new ProcessCall({
        task,
        onProgress: hooks.onProgress,
        onLogs: hooks.onLogs,
        maxLogChars: this.#options.limits.call.maxLogChars,
        resolve,
        onAnswered: () => {
          hooks.signal?.removeEventListener('abort', onCallerAbort);
          this.#calls.delete(call);
          if (this.#live !== undefined) this.#sent.awaitRelease(this.#live, call);
          this.#pump();
        },
      });
      this.#calls.add(call);
      if (hooks.signal?.aborted) {
        call.answer(failure('CALL_ABORTED', 'the call was aborted by its caller'));
        return;
      }
      hooks.signal?.addEventListener('abort', onCallerAbort, { once: true });
      this.#queue.push(call);
      this.#pump();
    });
  }

  /** Stops taking calls, lets the running ones answer, then ends the process. */
  async drain(): Promise<void> {
    this.#closed = true;
    this.#pump();
    if (this.#calls.size > 0 || (this.#live?.holding.size ?? 0) > 0) {
      await new Promise<void>((resolve) => this.#drained.push(resolve));
    }
    this.#budget.leave(this);
    await this.#endProcess();
    await this.#options.egress?.close();
  }

  /** Ends the process at once; calls still pending answer `HOST_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.length = 0;
    for (const call of [...this.#calls])
      call.answer(failure('HOST_CLOSED', 'the tool host closed during the call'));
    this.#budget.leave(this);
    await this.#endProcess();
    await this.#options.egress?.close();
  }

  async #endProcess(): Promise<void> {
    clearTimeout(this.#idle);
    const live = this.#live;
    if (live === undefined) return;
    await new Promise<void>((resolve) => {
      this.#gone.push(resolve);
      // Whoever awaits this is owed its end: the process holds the event loop until then.
      live.child.busy = true;
      live.child.kill({ cause: 'ended', message: 'was ended by the host' });
    });
  }

  /**
   * Something changed: the budget sends waiting calls (starting the process if there is none) as
   * their turns come, up to one per thread; with none waiting, the process goes idle.
   */
  #pump(): void {
    this.#budget.changed(this);
    if (this.queued === 0) this.#settle();
  }

  /** Gives `live` a call: it holds the call (a thread of its) until it gives it back. */
  #dispatchTo(live: Live, call: ProcessCall): void {
    if (call.answered) return;
    clearTimeout(this.#idle);
    live.child.busy = true;
    this.#sent.send(live, call);
  }

  /** A call ran over its bytes: it answers with the limit, and its tool is told to stop. */
  #overBudget(taskId: string, message: string): void {
    for (const call of this.#calls) {
      if (call.task.taskId !== taskId) continue;
      call.answer(failure('TOOL_ACCESS_DENIED', message));
      this.#live?.child.send({ type: 'cancel', taskId });
      return;
    }
  }

  /** Nothing waits: a process with nothing to do goes idle, and drains finish. */
  #settle(): void {
    const live = this.#live;
    if (live !== undefined && live.holding.size === 0 && live.first === undefined) {
      live.child.busy = false;
      clearTimeout(this.#idle);
      this.#idle = setTimeout(
        () => live.child.kill({ cause: 'ended', message: 'was idle' }),
        this.#options.limits.idleTimeoutMs,
      );
      this.#idle.unref();
    }
    // The spare this pool may have taken is made again now, when it competes with no call of its.
    if (!this.#replenished && !this.#closed && live !== undefined) {
      this.#replenished = true;
      void this.#options.spares?.replenish(this.#options.limits, this.#options.limits.call);
    }
    if (this.#closed && this.#calls.size === 0 && (live?.holding.size ?? 0) === 0) {
      for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  #spawn(): Live {
    const live: Live = {
      child: undefined as unknown as DomainChild,
      ready: false,
      holding: new Map(),
      faults: 0,
      tmpDir: this.#options.limits.call.tmpDir,
      first: undefined,
    };
    this.#live = live;
    this.#alive.add(live);
    startLive(live, this.#options, {
      onReady: () => {
        const first = live.first;
        live.first = undefined;
        if (first !== undefined) this.#dispatchTo(live, first);
        this.#pump();
      },
      onNote: (note) => this.#sent.note(live, note),
      onEnd: (end) => this.#processEnded(live, end),
      stillWanted: () => this.#live === live && !this.#closed,
    });
    return live;
  }

  #processEnded(live: Live, end: ChildEnd): void {
    // Heard once (a spare that could not hold the package may report its end after the pool closed).
    if (!this.#alive.delete(live)) return;
    if (this.#live === live) {
      this.#live = undefined;
      // Its idle timer would end a process that is gone.
      clearTimeout(this.#idle);
    }
    this.#sent.lost(live, end);
    // Calls that waited for a process that never started would only wait for the next one.
    if (!live.ready) {
      live.first?.answer(answerFor({ ...end, cause: 'crashed' }));
      live.first = undefined;
      for (const call of this.#queue.splice(0)) call.answer(answerFor({ ...end, cause: 'crashed' }));
    }
    for (const resolve of this.#gone.splice(0)) resolve();
    this.#pump();
  }
}
