/**
 * The worker threads of one pool, as the host knows them: which are ready, which call each was
 * handed (piscina's load balancer is ours, so the host itself sees the moment a call goes to a
 * worker, and counts its timeout from then), and each worker's own channels. Messages are taken
 * from each worker directly, so a message is only ever routed to a call of the worker that sent it;
 * a worker's stdout and stderr are unpiped from the host's, so nothing a tool writes reaches them.
 */
import type { Worker } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { parseWorkerMessage, type WorkerNote } from '../boundary/parse-call-reply.js';
import type { CallTask } from '../boundary/protocol.js';
import { queueOptionsSymbol, replyReader } from './piscina.js';
import { ensureEnded, type TrackedWorker, trackWorker } from './thread-reaper.js';

/** What piscina's balancer sees of a worker. */
interface WorkerView {
  readonly id: number;
  readonly currentUsage: number;
  readonly terminating: boolean;
  readonly destroyed: boolean;
  /** One task runs on it, and it was given an AbortSignal (piscina then reports its usage as Infinity). */
  readonly isRunningAbortableTask: boolean;
}

/** What a pool's call needs to hear from the worker it runs on. */
export interface ThreadListener {
  readonly taskId: string;
  handed(worker: TrackedWorker): void;
  message(note: WorkerNote): void;
  /** A message from its worker could not be deserialized (it may have been progress). */
  lostMessage(): void;
}

/**
 * Marks a piscina task as one of ours, so the balancer can tell which call it is handing out. A
 * symbol key: structured cloning leaves it out, so it never reaches the worker.
 */
export function tagTask(task: CallTask): CallTask {
  (task as CallTask & { [queueOptionsSymbol]?: unknown })[queueOptionsSymbol] = { taskId: task.taskId };
  return task;
}

export class PoolThreads<L extends ThreadListener = ThreadListener> {
  readonly #maxLogChars: number;
  readonly #maxThreads: number;
  readonly #queueBehind: ((call: L, ahead: L, worker: TrackedWorker) => boolean) | undefined;
  readonly #onFault: (message: string) => void;
  /** Calls waiting for a worker, by task id (until the balancer hands them out). */
  readonly #waiting = new Map<string, L>();
  /**
   * Per ready worker (by thread id): the worker, the calls handed to it that have not answered, and
   * how many tasks it holds of calls taken back from it (see pipeline.ts), which it will skip.
   */
  readonly #ready = new Map<number, { tracked: TrackedWorker; calls: Map<string, L>; skips: number }>();
  /** OS thread ids from workers' hellos, kept until the worker is ready. */
  readonly #hellos = new Map<number, number | null>();
  readonly #all = new Set<TrackedWorker>();
  /** Workers told to end (by piscina, or to give their budget place back) that have not exited. */
  readonly #ending = new Set<TrackedWorker>();
  /** Ended workers that did not exit within the reaper's bound and were let go: they still run. */
  readonly #stranded = new Set<TrackedWorker>();
  /** Workers that exited: piscina may list one a moment longer, until its own exit listener runs. */
  readonly #exited = new WeakSet<Worker>();
  /**
   * Workers told to end, ending or let go: piscina lists one it didn't end itself until it exits,
   * and such a worker counts as ending or stranded, never as running too.
   */
  readonly #toldToEnd = new WeakSet<Worker>();
  #piscina: Piscina | undefined;

  readonly #onWorkerGone: () => void;
  readonly #onChange: () => void;

  constructor(options: {
    maxLogChars: number;
    onFault: (message: string) => void;
    onWorkerGone: () => void;
    /** A worker started, or was told to end, or was let go. */
    onChange: () => void;
    /** The pool's most workers: a call is queued behind a running one only when all have started. */
    maxThreads?: number;
    /** Posts `call` behind `ahead` on `worker` (see pipeline.ts); false if it can't be queued. */
    queueBehind?: (call: L, ahead: L, worker: TrackedWorker) => boolean;
  }) {
    this.#maxLogChars = options.maxLogChars;
    this.#maxThreads = options.maxThreads ?? Number.POSITIVE_INFINITY;
    this.#queueBehind = options.queueBehind;
    this.#onFault = options.onFault;
    this.#onWorkerGone = options.onWorkerGone;
    this.#onChange = options.onChange;
  }

  /** Wires a piscina pool to this registry; every listener here is total (it never throws). */
  attach(piscina: Piscina): void {
    this.#piscina = piscina;
    piscina.on('message', (message: unknown) => {
      // Before a worker is ready, only its start-up code (ours) has run: its hello can be believed.
      const note = parseWorkerMessage(message, 0);
      if (note?.type === 'hello' && !this.#ready.has(note.threadId))
        this.#hellos.set(note.threadId, note.osThreadId);
    });
    piscina.on('workerCreate', (view: WorkerView) => {
      const worker = piscina.threads.find((thread) => thread.threadId === view.id);
      if (worker !== undefined) this.#adopt(worker, replyReader(view));
      this.#onChange();
    });
    piscina.on('workerDestroy', (view: WorkerView) => {
      this.#ready.delete(view.id);
      const tracked = [...this.#all].find((candidate) => candidate.threadId === view.id);
      if (tracked !== undefined) this.#ended(tracked);
      this.#onChange();
    });
  }

  /** Workers piscina runs or starts, not counting those told to end or already exited. */
  get running(): number {
    let count = 0;
    for (const worker of this.#piscina?.threads ?? []) {
      if (!this.#exited.has(worker) && !this.#toldToEnd.has(worker)) count += 1;
    }
    return count;
  }

  /** Workers told to end that have not exited (their budget places come back when they do). */
  get ending(): number {
    return this.#ending.size;
  }

  /** Workers let go (see thread-reaper): still alive, and not coming back on their own. */
  get stranded(): number {
    return this.#stranded.size;
  }

  /** Ready workers with no call, less those a call given to piscina is about to take. */
  get idle(): number {
    let free = 0;
    for (const thread of this.#ready.values()) if (this.#isFree(thread)) free += 1;
    return Math.max(0, free - this.#waiting.size);
  }

  /**
   * A ready worker with no call that has not exited. A worker that has exited stays in the ready
   * set until its `exited` promise's handler runs, a microtask after its `exit` event; the calls
   * piscina rejected in that event are answered before that, and the budget then hears of a free
   * worker that is gone: the call it started went to piscina, which started a worker the budget had
   * not granted (a host ran 4 workers on `maxWorkers` 3, test/worker-budget-cap.test.ts).
   */
  #isFree(thread: { tracked: TrackedWorker; calls: Map<string, L>; skips: number }): boolean {
    return thread.calls.size === 0 && thread.skips === 0 && !thread.tracked.hasExited();
  }

  /**
   * Ends one ready worker that has no call, to give its budget place back; false when there is none.
   * It leaves the ready set first, so the balancer never hands it a call while it ends.
   */
  endIdleWorker(): boolean {
    if (this.idle === 0) return false;
    for (const [threadId, thread] of this.#ready) {
      if (!this.#isFree(thread)) continue;
      this.#ready.delete(threadId);
      this.#ended(thread.tracked);
      // piscina removes it when it exits; nothing runs on it, so no call hears of it.
      void thread.tracked.worker.terminate().catch(() => {});
      return true;
    }
    return false;
  }

  /** A worker told to end: it counts as ending until it exits, or as stranded once it is let go. */
  #ended(tracked: TrackedWorker): void {
    if (tracked.hasExited() || this.#ending.has(tracked) || this.#stranded.has(tracked)) return;
    this.#toldToEnd.add(tracked.worker);
    this.#ending.add(tracked);
    void ensureEnded(tracked).then(() => {
      this.#ending.delete(tracked);
      if (tracked.hasExited()) return;
      this.#stranded.add(tracked);
      this.#onChange();
    });
  }

  /**
   * piscina's `loadBalancer`: an idle, ready worker; or, once every worker the pool may run is ready
   * and busy, one that runs a single call, to start the call the moment that one replies; or none
   * (piscina then waits or starts one).
   */
  readonly balance = (task: { [queueOptionsSymbol]?: unknown }, workers: WorkerView[]): WorkerView | null => {
    const tag = task[queueOptionsSymbol] as { taskId?: unknown } | undefined;
    const listener = typeof tag?.taskId === 'string' ? this.#waiting.get(tag.taskId) : undefined;
    for (const view of workers) {
      if (view.currentUsage !== 0 || view.terminating || view.destroyed) continue;
      const thread = this.#ready.get(view.id);
      if (thread === undefined) continue;
      if (listener !== undefined) {
        this.#waiting.delete(listener.taskId);
        thread.calls.set(listener.taskId, listener);
        listener.handed(thread.tracked);
      }
      return view;
    }
    if (listener === undefined || this.#queueBehind === undefined || this.#ready.size < this.#maxThreads)
      return null;
    for (const view of workers) {
      // piscina's view: exactly one task, and ours (every call's task is abortable).
      if (!view.isRunningAbortableTask || view.terminating || view.destroyed) continue;
      const thread = this.#ready.get(view.id);
      // The host's view: that task's call has not answered (a timed-out call's worker may be ending).
      if (thread === undefined || thread.calls.size !== 1 || thread.skips > 0) continue;
      const ahead = thread.calls.values().next().value as L;
      if (!this.#queueBehind(listener, ahead, thread.tracked)) return null;
      this.#waiting.delete(listener.taskId);
      thread.calls.set(listener.taskId, listener);
      return view;
    }
    return null;
  };

  /** Whether any worker of the pool has started (and not exited). */
  get anyReady(): boolean {
    return this.#ready.size > 0;
  }

  /** The calls given to piscina that no worker has taken yet. */
  get waiting(): L[] {
    return [...this.#waiting.values()];
  }

  /** A call about to go to piscina: it is told when (and to which worker) it is handed. */
  expect(listener: L): void {
    this.#waiting.set(listener.taskId, listener);
  }

  /** A call answered: no more messages are routed to it. */
  forget(listener: L, worker: TrackedWorker | undefined): void {
    this.#waiting.delete(listener.taskId);
    if (worker !== undefined) this.#ready.get(worker.threadId)?.calls.delete(listener.taskId);
  }

  /** A call was taken back from `worker` (its task there is still to be skipped), or that task left. */
  skipping(worker: TrackedWorker, change: 1 | -1): void {
    const thread = this.#ready.get(worker.threadId);
    if (thread !== undefined) thread.skips = Math.max(0, thread.skips + change);
  }

  /** Every worker this pool started that has not exited. */
  get workers(): TrackedWorker[] {
    return [...this.#all].filter((tracked) => !tracked.hasExited());
  }

  #adopt(worker: Worker, readReplies: (() => void) | undefined): void {
    const threadId = worker.threadId;
    const tracked = trackWorker(worker, this.#hellos.get(threadId) ?? null);
    this.#hellos.delete(threadId);
    this.#all.add(tracked);
    void tracked.exited.then(() => {
      this.#exited.add(worker);
      this.#all.delete(tracked);
      this.#ending.delete(tracked);
      this.#stranded.delete(tracked);
      this.#ready.delete(threadId);
      this.#onWorkerGone();
    });
    const calls = new Map<string, L>();
    this.#ready.set(threadId, { tracked, calls, skips: 0 });
    // Before piscina's own listener rejects what the worker holds: the replies it posted count.
    if (readReplies !== undefined) {
      tracked.readReplies = () => {
        try {
          readReplies();
        } catch {
          // piscina then rejects those tasks as it would have.
        }
      };
      worker.prependListener('exit', tracked.readReplies);
    }
    // piscina's workers are made with their stdio piped to the host's: undo that, and drop what comes.
    for (const [stream, target] of [
      [worker.stdout, process.stdout],
      [worker.stderr, process.stderr],
    ] as const) {
      stream.unpipe(target);
      stream.resume();
    }
    worker.on('message', (message: unknown) => {
      try {
        const note = parseWorkerMessage(message, this.#maxLogChars);
        if (note === undefined || note.type === 'hello') return;
        if (note.taskId === null) {
          if (note.type !== 'fault') return;
          // The worker ends right after such a report: a call handed to it now would be blamed for it.
          this.#ready.delete(threadId);
          this.#onFault(`a worker failed outside any call: ${note.message}`);
          return;
        }
        calls.get(note.taskId)?.message(note);
      } catch (error) {
        this.#onFault(`a worker's message could not be handled: ${String(error)}`);
      }
    });
    worker.on('messageerror', () => {
      for (const listener of calls.values()) listener.lostMessage();
    });
  }
}
