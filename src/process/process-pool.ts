/**
 * The process tier's pool for one package version: the calls run in a process of the package's own
 * (see domain-child.ts), which runs the same pool of worker threads the worker tier runs in the host.
 * The host queues the calls and sends that process at most one per thread, so a call sent starts at
 * once; deadlines are the host's ({@link ProcessCall}). When the process dies, however it dies, the
 * calls it was running answer (`TOOL_OUT_OF_MEMORY` when its memory limit killed it, `TOOL_CRASHED`
 * otherwise), and the next call starts a new process. An idle process ends after `idleTimeoutMs`.
 * A package held to hosts has its egress proxy told when each call is sent and given back: that is
 * what its bytes per call are charged by, and a call that runs over answers `TOOL_ACCESS_DENIED`.
 */
import { rm } from 'node:fs/promises';
import { type CallTask, callTmpDir } from '../boundary/protocol.js';
import { failure, type PoolReply } from '../calls/answer-once.js';
import type { CallPool, PoolCallHooks } from '../calls/worker-pool.js';
import type { ChildNote } from './child-messages.js';
import type { ChildEnd, DomainChild } from './domain-child.js';
import { type Live, type LiveOptions, startLive } from './pool-process.js';
import { ProcessCall } from './process-call.js';

export interface ProcessPoolOptions extends LiveOptions {
  onFault: (message: string) => void;
}

/** How long a process may take to give back a call the host has answered (timed out, aborted). */
const RELEASE_BOUND_MS = 10_000;
/** Fault reports kept per process: a process that floods them is heard this many times. */
const MAX_FAULTS = 100;

function answerFor(end: ChildEnd): PoolReply {
  const code = end.cause === 'memory' ? 'TOOL_OUT_OF_MEMORY' : 'TOOL_CRASHED';
  return failure(code, `the tool's process ${end.message}`);
}

export class ProcessDomainPool implements CallPool {
  readonly #options: ProcessPoolOptions;
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

  constructor(options: ProcessPoolOptions) {
    this.#options = options;
    options.egress?.watchCalls((taskId, message) => this.#overBudget(taskId, message));
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
          this.#awaitRelease(call);
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
    await this.#endProcess();
    await this.#options.egress?.close();
  }

  /** Ends the process at once; calls still pending answer `HOST_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.length = 0;
    for (const call of [...this.#calls])
      call.answer(failure('HOST_CLOSED', 'the tool host closed during the call'));
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

  /** Sends waiting calls to the process (starting one if there is none), up to one per thread. */
  #pump(): void {
    while (this.#queue[0]?.answered === true) this.#queue.shift();
    if (this.#queue.length === 0) {
      this.#settle();
      return;
    }
    clearTimeout(this.#idle);
    // A process being ended still answers what it holds, but takes nothing new.
    if (this.#live?.child.ending === true) this.#live = undefined;
    const live = this.#live ?? this.#spawn();
    live.child.busy = true;
    if (!live.ready) return;
    while (this.#queue.length > 0 && live.holding.size < this.#options.limits.maxThreads) {
      const call = this.#queue.shift() as ProcessCall;
      if (call.answered) continue;
      live.holding.set(call.task.taskId, call);
      this.#send(live, call);
    }
  }

  /** A call to the process, once its egress proxy (if any) charges it. */
  #send(live: Live, call: ProcessCall): void {
    const send = () => {
      live.child.send({ type: 'run', task: call.task });
      call.sent(() => this.#kill(live, 'crashed', 'did not start a call it was sent'));
    };
    const egress = this.#options.egress;
    if (egress === undefined) {
      send();
      return;
    }
    const { taskId } = call.task;
    void egress.begin(taskId).then(() => {
      // The process ended meanwhile (and answered the call), or the call was answered unsent.
      if (live.holding.get(taskId) !== call) return;
      if (call.answered) {
        this.#release(live, taskId);
        this.#pump();
        return;
      }
      send();
    });
  }

  /** The process gave a call back (or is gone): its thread is free, and its bytes are counted no more. */
  #release(live: Live, taskId: string): void {
    live.holding.delete(taskId);
    this.#options.egress?.end(taskId);
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
    if (live !== undefined && live.holding.size === 0) {
      live.child.busy = false;
      clearTimeout(this.#idle);
      this.#idle = setTimeout(
        () => this.#kill(live, 'ended', 'was idle'),
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
    };
    this.#live = live;
    startLive(live, this.#options, {
      onReady: () => this.#pump(),
      onNote: (note) => this.#note(live, note),
      onEnd: (end) => this.#processEnded(live, end),
      stillWanted: () => this.#live === live && !this.#closed,
    });
    return live;
  }

  #note(live: Live, note: ChildNote): void {
    if (note.type === 'fault') {
      live.faults += 1;
      if (live.faults <= MAX_FAULTS) this.#options.onFault(note.message);
      return;
    }
    if (note.type === 'hello' || note.type === 'ready' || note.type === 'read') return;
    const call = live.holding.get(note.taskId);
    if (call === undefined) return;
    if (note.type === 'started') {
      call.started();
    } else if (note.type === 'progress') {
      call.progress(note.data);
    } else if (note.type === 'log') {
      call.logs(note.logs);
    } else if (call.answered) {
      // A call the host answered itself (timed out, aborted): its reply only gives its thread back.
      this.#release(live, note.taskId);
      this.#pump();
    } else if (!note.reply.ok) {
      const reason = note.reply.reason;
      call.answer(failure('TOOL_BAD_RESULT', `the tool's process sent a malformed reply: ${reason}`));
      // Its pool parsed its workers' replies: a bad one means the process itself was taken over.
      this.#kill(live, 'protocol', 'sent a malformed reply');
    } else {
      this.#release(live, note.taskId);
      call.answer(note.reply.value);
      this.#pump();
    }
  }

  /** The host answered a call the process still holds: the process must give it back in time. */
  #awaitRelease(call: ProcessCall): void {
    const live = this.#live;
    if (live === undefined || live.holding.get(call.task.taskId) !== call) return;
    const bound = this.#options.limits.timeoutGraceMs + RELEASE_BOUND_MS;
    setTimeout(() => {
      if (live.holding.get(call.task.taskId) === call)
        this.#kill(live, 'crashed', 'did not end a call in time');
    }, bound).unref();
  }

  #kill(live: Live, cause: ChildEnd['cause'], message: string): void {
    live.child.kill({ cause, message });
  }

  #processEnded(live: Live, end: ChildEnd): void {
    if (this.#live === live) {
      this.#live = undefined;
      // Its idle timer would end a process that is gone.
      clearTimeout(this.#idle);
    }
    const reply = answerFor(end);
    for (const taskId of live.holding.keys()) this.#options.egress?.end(taskId);
    for (const call of live.holding.values()) {
      call.answer(reply);
      // Its worker could not remove the call's tmpDir: the process is gone.
      const settings = { ...this.#options.limits.call, tmpDir: live.tmpDir };
      void rm(callTmpDir(settings, call.task), { recursive: true, force: true }).catch(() => {});
    }
    live.holding.clear();
    // Calls that waited for a process that never started would only wait for the next one.
    if (!live.ready) {
      for (const call of this.#queue.splice(0)) call.answer(answerFor({ ...end, cause: 'crashed' }));
    }
    for (const resolve of this.#gone.splice(0)) resolve();
    this.#pump();
  }
}
