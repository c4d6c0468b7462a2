/**
 * The process tier's pool for one package version: its calls run in processes of the package's own
 * (see domain-child.ts), each running one call at a time on its main thread, as a worker runs one in
 * the other tiers. Up to `maxThreads` processes per package, each counting one unit of the host's
 * worker budget (worker-budget.ts), which starts them and sends them calls as their turns come;
 * deadlines are the host's ({@link ProcessCall}). A process is ended where a worker would be: a call
 * over its timeout that does not end within the grace, a caller's abort, a package over its network
 * bytes, and when it dies, however it dies, its call answers (`TOOL_OUT_OF_MEMORY` when it ran out
 * of heap or over its memory limit, `TOOL_CRASHED` otherwise). The next call takes another process.
 * An idle process ends after `idleTimeoutMs`, or sooner when the budget needs its place for another
 * package (the one idle longest first): which process does what is pool-lives.ts's.
 */
import type { CallTask } from '../../boundary/protocol.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';
import type { BudgetMember, NextStart } from '../../calls/budget-member.js';
import { WorkerBudget } from '../../calls/worker-budget.js';
import type { CallPool, PoolCallHooks } from '../../calls/worker-pool.js';
import type { ChildEnd } from './child-end.js';
import { withGrantHint } from './grant-hint.js';
import { PoolLives } from './pool-lives.js';
import { type Live, type LiveOptions, newLive, startLive } from './pool-process.js';
import { ProcessCall } from './process-call.js';
import { answerFor, SentCalls } from './sent-calls.js';

export interface ProcessPoolOptions extends LiveOptions {
  onFault: (message: string) => void;
  /** The host's worker budget, where each of the package's processes counts one. @default a budget of its own */
  budget?: WorkerBudget;
  /** The package, for the budget's events. */
  source?: string;
  /**
   * For a package its sandbox gives no network: what grants it, added to a refused connection's
   * answer (its process names where the connection went, not the package, which it doesn't know).
   */
  networkGrantHint?: string;
}

const ABORTED = 'the call was aborted by its caller';

export class ProcessDomainPool implements CallPool, BudgetMember {
  readonly #options: ProcessPoolOptions;
  readonly #sent: SentCalls;
  readonly #calls = new Set<ProcessCall>();
  readonly #queue: ProcessCall[] = [];
  readonly #lives: PoolLives;
  /** Drains waiting for every call to be answered and given back. */
  readonly #drained: Array<() => void> = [];
  /** Waiting for every process to be gone. */
  readonly #gone: Array<() => void> = [];
  #closed = false;
  /** The host's worker budget: it starts this pool's processes and calls, in turn with other pools'. */
  readonly #budget: WorkerBudget;
  readonly source: string;

  constructor(options: ProcessPoolOptions) {
    this.#options = options;
    this.#lives = new PoolLives(options.limits.idleTimeoutMs);
    this.#budget = options.budget ?? new WorkerBudget(Number.POSITIVE_INFINITY);
    this.source = options.source ?? '';
    this.#sent = new SentCalls({
      egress: options.egress,
      onFault: options.onFault,
      timeoutGraceMs: options.limits.timeoutGraceMs,
      call: options.limits.call,
      onGivenBack: (live) => {
        this.#lives.rest(live);
        this.#pump();
      },
    });
    options.egress?.watchCalls((taskId, message) => this.#overBudget(taskId, message));
    this.#budget.join(this);
  }

  get queued(): number {
    while (this.#queue[0]?.answered === true) this.#queue.shift();
    return this.#queue.length;
  }

  get occupied(): number {
    return this.#lives.size;
  }

  get ending(): number {
    return this.#lives.ending;
  }

  get idle(): number {
    return this.#lives.idle;
  }

  get resting(): boolean {
    return this.#lives.resting;
  }

  nextStart(): NextStart {
    if (this.#lives.idlest('shortest') !== undefined) return 'now';
    if (!this.#mayStartAnother()) return 'wait';
    const { spares, egress, limits, paths } = this.#options;
    // A package held to hosts gets its proxy bound when its process starts: no spare has it.
    return egress === undefined && spares?.fits(limits, paths) === true ? 'spare' : 'place';
  }

  /** Sends the next waiting call to an idle process, or starts the process it will run on. */
  startNext(): boolean {
    if (this.queued === 0) return false;
    const idle = this.#lives.idlest('shortest');
    if (idle !== undefined) {
      this.#dispatchTo(idle, this.#queue.shift() as ProcessCall);
      return true;
    }
    if (!this.#mayStartAnother()) return false;
    this.#spawn(this.#queue.shift() as ProcessCall);
    return true;
  }

  endIdle(): boolean {
    const live = this.#lives.idlest('longest');
    if (live === undefined) return false;
    live.child.kill({ cause: 'ended', message: 'was ended to make room for another package' });
    return true;
  }

  run(task: CallTask, hooks: PoolCallHooks = {}): Promise<PoolReply> {
    if (this.#closed) return Promise.resolve(failure('HOST_CLOSED', 'the tool host is closed'));
    return new Promise<PoolReply>((resolve) => {
      const onCallerAbort = () => this.#abort(call);
      const call: ProcessCall = new ProcessCall({
        task,
        onProgress: hooks.onProgress,
        onLogs: hooks.onLogs,
        maxLogChars: this.#options.limits.call.maxLogChars,
        resolve: (reply) => resolve(withGrantHint(reply, this.#options.networkGrantHint)),
        onAnswered: () => {
          hooks.signal?.removeEventListener('abort', onCallerAbort);
          this.#calls.delete(call);
          const live = this.#lives.holder(call);
          if (live !== undefined) this.#sent.awaitRelease(live, call);
          // Answered before the process started for it was ready: that process is free once it is.
          for (const starting of this.#lives) if (starting.first === call) starting.first = undefined;
          this.#pump();
        },
      });
      this.#calls.add(call);
      if (hooks.signal?.aborted) {
        call.answer(failure('CALL_ABORTED', ABORTED));
        return;
      }
      hooks.signal?.addEventListener('abort', onCallerAbort, { once: true });
      this.#queue.push(call);
      this.#pump();
    });
  }

  /** Stops taking calls, lets the running ones answer, then ends the processes. */
  async drain(): Promise<void> {
    this.#closed = true;
    this.#pump();
    if (this.#calls.size > 0 || !this.resting) {
      await new Promise<void>((resolve) => this.#drained.push(resolve));
    }
    this.#budget.leave(this);
    await this.#endProcesses();
    await this.#options.egress?.close();
  }

  /** Ends the processes at once; calls still pending answer `HOST_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.length = 0;
    for (const call of [...this.#calls])
      call.answer(failure('HOST_CLOSED', 'the tool host closed during the call'));
    this.#budget.leave(this);
    await this.#endProcesses();
    await this.#options.egress?.close();
  }

  async #endProcesses(): Promise<void> {
    if (this.#lives.size === 0) return;
    await new Promise<void>((resolve) => {
      this.#gone.push(resolve);
      for (const live of this.#lives) {
        clearTimeout(live.idleTimer);
        // Whoever awaits this is owed its end: the process holds the event loop until then.
        live.child.busy = true;
        live.child.kill({ cause: 'ended', message: 'was ended by the host' });
      }
    });
  }

  /** The caller gave up on `call`: it answers, and the process running it is ended (as a worker is). */
  #abort(call: ProcessCall): void {
    call.answer(failure('CALL_ABORTED', ABORTED));
    this.#lives.holder(call)?.child.kill({ cause: 'ended', message: 'was ended: its call was aborted' });
  }

  /** A call ran over its bytes: it answers with the limit, and its process is ended. */
  #overBudget(taskId: string, message: string): void {
    for (const call of this.#calls) {
      if (call.task.taskId !== taskId) continue;
      call.answer(failure('TOOL_ACCESS_DENIED', message));
      this.#lives
        .holder(call)
        ?.child.kill({ cause: 'ended', message: 'was ended: its call ran over its bytes' });
      return;
    }
  }

  /** Under `maxThreads`, and none starting for a call that no longer wants it (that one is free once ready). */
  #mayStartAnother(): boolean {
    return this.#lives.starting() === undefined && this.#lives.working < this.#options.limits.maxThreads;
  }

  /**
   * Something changed: the budget sends waiting calls (starting processes for them) as their turns
   * come; with none waiting, drains finish.
   */
  #pump(): void {
    this.#budget.changed(this);
    if (this.queued === 0) this.#settle();
  }

  /** Gives `live` a call: it holds the call until it gives it back. */
  #dispatchTo(live: Live, call: ProcessCall): void {
    if (call.answered) return;
    clearTimeout(live.idleTimer);
    live.child.busy = true;
    this.#sent.send(live, call);
  }

  /** Nothing waits: spares taken are made again, and drains finish. */
  #settle(): void {
    // A spare this pool took is made again now that no call of the pool waits for a process (the
    // calls it took processes for may still be running).
    let tookSpare = false;
    for (const live of this.#lives) {
      if (live.fromSpare) tookSpare = true;
      live.fromSpare = false;
    }
    if (tookSpare && !this.#closed) {
      void this.#options.spares?.replenish(this.#options.limits, this.#options.limits.call);
    }
    if (this.#closed && this.#calls.size === 0 && this.resting) {
      for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  #spawn(first: ProcessCall): void {
    const live = newLive(first, this.#options.limits.call.tmpDir);
    this.#lives.add(live);
    startLive(live, this.#options, {
      onReady: () => {
        const call = live.first;
        live.first = undefined;
        if (call !== undefined && !call.answered) this.#dispatchTo(live, call);
        else this.#lives.rest(live);
        this.#pump();
      },
      onNote: (note) => this.#sent.note(live, note),
      onEnd: (end) => this.#processEnded(live, end),
      stillWanted: () => this.#lives.has(live) && !this.#closed,
    });
    // The turn is this call's: the new process is not idle (nor ended to make room) until it has it.
    live.child.busy = true;
  }

  #processEnded(live: Live, end: ChildEnd): void {
    // Heard once (a spare that could not hold the package may report its end after the pool closed).
    if (!this.#lives.delete(live)) return;
    clearTimeout(live.idleTimer);
    this.#sent.lost(live, end);
    // Calls that waited for a process that never started would only wait for the next one, unless
    // another process of the pool runs or is starting.
    if (!live.ready) {
      const reply = answerFor({ ...end, cause: end.cause === 'ended' ? 'crashed' : end.cause });
      live.first?.answer(reply);
      live.first = undefined;
      const others = [...this.#lives].some((other) => !other.child.ending);
      if (!others) for (const call of this.#queue.splice(0)) call.answer(reply);
    }
    if (this.#lives.size === 0) for (const resolve of this.#gone.splice(0)) resolve();
    this.#pump();
  }
}
