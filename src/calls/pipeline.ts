/**
 * Calls queued on a busy worker. When every worker of a pool runs a call, the balancer may post one
 * more call to a worker behind the one it runs, so the worker starts it the moment it replies,
 * without waiting for the host to hear the reply and send the next task. A worker still runs one
 * call at a time (workers/call/queue.ts): a queued call's timeout counts from when the call ahead of
 * it has left its worker, not from when it was posted.
 *
 * A queued call can be taken back, once, for as long as its worker has not started it: its claim is
 * a cell of memory shared with the pool's workers, which the host sets to 0 to take it back and the
 * worker negates to start it, each with one compare-and-exchange, so exactly one of them wins. It is
 * taken back when its caller aborts it (the worker isn't ended), when the call ahead of it is ended
 * (timed out, aborted, a malformed reply) or lost (its worker died), when its worker dies after the
 * call ahead replied but before it started this one, and when another worker of the pool falls idle,
 * or another's place frees, while it still waits; taken back, it runs again as a new call to the
 * pool, with a full timeout from when it starts there.
 */
import type { CallTask } from '../boundary/protocol.js';
import type { TrackedWorker } from './thread-reaper.js';

/** A call as the pipeline moves it: the pool's {@link PoolCall}. */
export interface Pipelined {
  readonly task: CallTask;
  /** Counts the tasks the call was given to piscina as. */
  readonly attempt: number;
  readonly answered: boolean;
  readonly worker: TrackedWorker | undefined;
  /** Posted to `worker` behind a running call: no deadline yet. */
  queued(worker: TrackedWorker): void;
  /** It runs now (the call ahead of it left the worker): its deadline is armed from here. */
  begin(): void;
}

interface Queued<C extends Pipelined> {
  call: C;
  ahead: C;
  worker: TrackedWorker;
  slot: number;
  ticket: number;
}

/** What the pipeline asks of its pool. */
export interface PipelineHooks<C> {
  /** A call taken back, to run again: it goes back to the front of its pool's queue. */
  rerun(call: C): void;
  /** `call` was taken back from `worker`, whose task of it is still to be skipped (1), or has left (-1). */
  skipping(call: C, worker: TrackedWorker, change: 1 | -1): void;
}

export class Pipeline<C extends Pipelined> {
  /** Shared with every worker of the pool (its `workerData`). */
  readonly buffer: SharedArrayBuffer;
  readonly #cells: Int32Array;
  /** Slots not held by a posted claim: a slot comes back once its task has left piscina. */
  readonly #free: number[] = [];
  #ticket = 0;
  /** Queued calls not started, by the call ahead of them, and by themselves. */
  readonly #behind = new Map<C, Queued<C>>();
  readonly #queued = new Map<C, Queued<C>>();
  /**
   * Calls begun without the host's exchange (the call ahead replied): each holds its claim until its
   * task has left, since its worker may not have made its exchange yet and can still be beaten to it.
   */
  readonly #starting = new Map<C, Queued<C>>();
  /** Tasks of calls taken back, not yet skipped by their workers: by call, its attempt and worker. */
  readonly #skips = new Map<C, Array<{ attempt: number; worker: TrackedWorker }>>();
  readonly #hooks: PipelineHooks<C>;

  /** `slots`: two per worker (a worker holds at most a call queued behind one that began queued). */
  constructor(slots: number, hooks: PipelineHooks<C>) {
    this.buffer = new SharedArrayBuffer(4 * slots);
    this.#cells = new Int32Array(this.buffer);
    for (let slot = slots - 1; slot >= 0; slot -= 1) this.#free.push(slot);
    this.#hooks = hooks;
  }

  /** Whether any call waits queued on a worker. */
  get size(): number {
    return this.#queued.size;
  }

  /**
   * Queues `call` on `worker` behind `ahead`: the claim goes into its task. False (nothing changed)
   * when every slot is out.
   */
  queue(call: C, ahead: C, worker: TrackedWorker): boolean {
    const slot = this.#free.pop();
    if (slot === undefined) return false;
    this.#ticket = this.#ticket >= 0x7fff_ffff ? 1 : this.#ticket + 1;
    const ticket = this.#ticket;
    Atomics.store(this.#cells, slot, ticket);
    call.task.claim = [slot, ticket];
    const entry = { call, ahead, worker, slot, ticket };
    this.#behind.set(ahead, entry);
    this.#queued.set(call, entry);
    call.queued(worker);
    return true;
  }

  /**
   * `call`'s task left piscina. A call that began without a compare-and-exchange of the host's (see
   * aheadLeft) holds its slot until now: its worker's exchange may not have happened before. A call
   * still queued (a reply forged for it, say) is taken back, so its worker never starts it.
   */
  settled(call: C): void {
    this.taskLeft(call, call.attempt);
    const entry = this.#starting.get(call) ?? this.#queued.get(call);
    if (entry === undefined) return;
    this.#drop(entry);
    Atomics.compareExchange(this.#cells, entry.slot, entry.ticket, 0);
    this.#free.push(entry.slot);
  }

  /** A task of `call` (its `attempt`) left piscina: if its worker was to skip it, that is done. */
  taskLeft(call: C, attempt: number): void {
    if (this.#skips.size === 0) return;
    const skips = this.#skips.get(call);
    const index = skips?.findIndex((skip) => skip.attempt === attempt) ?? -1;
    if (skips === undefined || index === -1) return;
    const [skip] = skips.splice(index, 1);
    if (skips.length === 0) this.#skips.delete(call);
    if (skip !== undefined) this.#hooks.skipping(call, skip.worker, -1);
  }

  /**
   * `ahead` left its worker (`intact`: replied, and the worker is not being ended). The call queued
   * behind it begins; otherwise it is taken back, or, if the worker started it, begins.
   */
  aheadLeft(ahead: C, intact: boolean): void {
    const entry = this.#behind.get(ahead);
    if (entry === undefined) return;
    if (intact) {
      this.#drop(entry);
      this.#starting.set(entry.call, entry);
      entry.call.begin();
    } else this.#takeBack(entry, true);
  }

  /** `ahead`'s worker is about to be ended: the call queued behind it runs elsewhere. */
  aheadEnding(ahead: C): void {
    const entry = this.#behind.get(ahead);
    if (entry !== undefined) this.#takeBack(entry, true);
  }

  /**
   * Takes back a queued call, or one begun whose worker has not made its exchange yet: true if it
   * had not started (its worker skips it; with `rerun`, it is handed to the pool again); false if it
   * was never queued or has started (then it begins, and ends as any call does). A caller's abort
   * takes a call back this way, without ending its worker; so does its worker's end before it
   * started the call.
   */
  withdraw(call: C, rerun = false): boolean {
    const entry = this.#queued.get(call) ?? this.#starting.get(call);
    return entry !== undefined && this.#takeBack(entry, rerun);
  }

  /** A worker of the pool fell idle: the oldest queued call moves to it. */
  stealOne(): void {
    const first = this.#queued.values().next();
    if (!first.done) this.#takeBack(first.value, true);
  }

  #takeBack(entry: Queued<C>, rerun: boolean): boolean {
    this.#drop(entry);
    const { call } = entry;
    const exchanged = Atomics.compareExchange(this.#cells, entry.slot, entry.ticket, 0);
    // Either way the cell is settled (0, or the worker's negated ticket): tickets are never reused
    // while a task could hold them, so the slot can take another claim at once.
    this.#free.push(entry.slot);
    if (exchanged !== entry.ticket) {
      // The worker started it: it runs where it is, on its own deadline from now.
      call.begin();
      return false;
    }
    const skips = this.#skips.get(call) ?? [];
    skips.push({ attempt: call.attempt, worker: entry.worker });
    this.#skips.set(call, skips);
    this.#hooks.skipping(call, entry.worker, 1);
    if (rerun && !call.answered) this.#hooks.rerun(call);
    return true;
  }

  #drop(entry: Queued<C>): void {
    if (this.#behind.get(entry.ahead) === entry) this.#behind.delete(entry.ahead);
    this.#queued.delete(entry.call);
    this.#starting.delete(entry.call);
  }
}
