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
 * package (the one idle longest first).
 */
import type { CallTask } from '../../boundary/protocol.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';
import type { BudgetMember, NextStart } from '../../calls/budget-member.js';
import { WorkerBudget } from '../../calls/worker-budget.js';
import type { CallPool, PoolCallHooks } from '../../calls/worker-pool.js';
import type { ChildEnd } from './domain-child.js';
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

/** The sentence a package process answers a failed connection with when it has no network. */
const NO_NETWORK_REFUSAL =
  /^the process isolation tier refused network access to ([\w.:[\]-]+) \(no network is granted to this package\)$/;

const ABORTED = 'the call was aborted by its caller';

export class ProcessDomainPool implements CallPool, BudgetMember {
  readonly #options: ProcessPoolOptions;
  readonly #sent: SentCalls;
  readonly #calls = new Set<ProcessCall>();
  readonly #queue: ProcessCall[] = [];
  /** Processes started that have not ended (those being ended too, until they are gone). */
  readonly #lives = new Set<Live>();
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
    this.#budget = options.budget ?? new WorkerBudget(Number.POSITIVE_INFINITY);
    this.source = options.source ?? '';
    this.#sent = new SentCalls({
      egress: options.egress,
      onFault: options.onFault,
      timeoutGraceMs: options.limits.timeoutGraceMs,
      call: options.limits.call,
      onGivenBack: (live) => {
        this.#rest(live);
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
    let count = 0;
    for (const live of this.#lives) if (live.child.ending) count += 1;
    return count;
  }

  get idle(): number {
    let count = 0;
    for (const live of this.#lives) if (isIdle(live)) count += 1;
    return count;
  }

  get resting(): boolean {
    for (const live of this.#lives) if (live.holding !== undefined || live.first !== undefined) return false;
    return true;
  }

  nextStart(): NextStart {
    if (this.#idle('shortest') !== undefined) return 'now';
    // One starting for a call that no longer wants it is free the moment it is ready.
    if (this.#starting() !== undefined || this.#working() >= this.#options.limits.maxThreads) return 'wait';
    const { spares, egress, limits, paths } = this.#options;
    // A package held to hosts gets its proxy bound when its process starts: no spare has it.
    return egress === undefined && spares?.fits(limits, paths) === true ? 'spare' : 'place';
  }

  /** Sends the next waiting call to an idle process, or starts the process it will run on. */
  startNext(): boolean {
    if (this.queued === 0) return false;
    const idle = this.#idle('shortest');
    if (idle !== undefined) {
      this.#dispatchTo(idle, this.#queue.shift() as ProcessCall);
      return true;
    }
    if (this.#starting() !== undefined || this.#working() >= this.#options.limits.maxThreads) return false;
    this.#spawn(this.#queue.shift() as ProcessCall);
    return true;
  }

  endIdle(): boolean {
    const live = this.#idle('longest');
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
        resolve: (reply) => resolve(this.#withGrantHint(reply)),
        onAnswered: () => {
          hooks.signal?.removeEventListener('abort', onCallerAbort);
          this.#calls.delete(call);
          const live = this.#holder(call);
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

  /** A refused connection's answer, with what would grant it (see `networkGrantHint`). */
  #withGrantHint(reply: PoolReply): PoolReply {
    const hint = this.#options.networkGrantHint;
    if (hint === undefined || reply.ok || reply.error.code !== 'TOOL_ACCESS_DENIED') return reply;
    const where = NO_NETWORK_REFUSAL.exec(reply.error.message)?.[1];
    if (where === undefined) return reply;
    const message = `${reply.error.message.slice(0, -')'.length)}: ${hint.replaceAll('<host>', where)})`;
    return { ...reply, error: { ...reply.error, message } };
  }

  /** The caller gave up on `call`: it answers, and the process running it is ended (as a worker is). */
  #abort(call: ProcessCall): void {
    call.answer(failure('CALL_ABORTED', ABORTED));
    this.#holder(call)?.child.kill({ cause: 'ended', message: 'was ended: its call was aborted' });
  }

  /** A call ran over its bytes: it answers with the limit, and its process is ended. */
  #overBudget(taskId: string, message: string): void {
    for (const call of this.#calls) {
      if (call.task.taskId !== taskId) continue;
      call.answer(failure('TOOL_ACCESS_DENIED', message));
      this.#holder(call)?.child.kill({ cause: 'ended', message: 'was ended: its call ran over its bytes' });
      return;
    }
  }

  /** The process that holds `call` (sent it, and not given it back), if any. */
  #holder(call: ProcessCall): Live | undefined {
    for (const live of this.#lives) if (live.holding === call) return live;
    return undefined;
  }

  /**
   * Of the processes with nothing to do, the one idle longest (the first to end) or the shortest time
   * (the next call's, so that a pool busier a while ago than now lets its other processes reach
   * `idleTimeoutMs`).
   */
  #idle(which: 'longest' | 'shortest'): Live | undefined {
    const sign = which === 'longest' ? 1 : -1;
    let found: Live | undefined;
    for (const live of this.#lives) {
      if (isIdle(live) && (found === undefined || sign * (found.idleSince - live.idleSince) > 0))
        found = live;
    }
    return found;
  }

  /** A process starting for a call that was answered before it was ready. */
  #starting(): Live | undefined {
    for (const live of this.#lives) {
      if (!live.ready && !live.child.ending && live.first === undefined) return live;
    }
    return undefined;
  }

  /** Processes not being ended. */
  #working(): number {
    return this.#lives.size - this.ending;
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

  /** `live` has nothing to do: it is ended after `idleTimeoutMs` unless a call comes first. */
  #rest(live: Live): void {
    if (!isIdle(live)) return;
    live.idleSince = performance.now();
    live.child.busy = false;
    clearTimeout(live.idleTimer);
    live.idleTimer = setTimeout(
      () => live.child.kill({ cause: 'ended', message: 'was idle' }),
      this.#options.limits.idleTimeoutMs,
    );
    live.idleTimer.unref();
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
        else this.#rest(live);
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

/** Ready, holding no call and waiting for none, not being ended. */
function isIdle(live: Live): boolean {
  return live.ready && live.holding === undefined && live.first === undefined && !live.child.ending;
}
