/**
 * One piscina pool per trust domain (a tool package, or a single module). Workers start lazily and
 * exit when idle. Every way a call can end (a reply, a timeout, an exit, running out of memory, a
 * crash, a caller's abort, the host closing) becomes exactly one {@link PoolReply}; a fault ends only
 * the worker it happened in and piscina replaces it.
 */
import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ToolErrorCode } from './errors.js';
import {
  type CallReply,
  type CallSettings,
  type CallStarts,
  type CallTask,
  type CapturedLog,
  callTmpDir,
  clearCallStart,
  createCallStarts,
  now,
  readCallStart,
  WORKER_MESSAGE_TAG,
  type WorkerMessage,
} from './protocol.js';
import type { JsonValue } from './tool-module.js';

const CALL_WORKER = fileURLToPath(new URL('../workers/call-worker.js', import.meta.url));

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

/** A failure the host saw without a reply from the worker. */
export type PoolReply =
  | CallReply
  | {
      ok: false;
      error: { code: ToolErrorCode; message: string };
      logs: CapturedLog[];
      droppedLogBytes: number;
    };

interface InFlight {
  onProgress(data: JsonValue): void;
  progressReceived: number;
  /** A reply that arrived before all the progress the tool sent ahead of it. */
  heldReply: CallReply | undefined;
  fault: (WorkerMessage & { type: 'fault' }) | undefined;
}

export interface PoolCallHooks {
  signal?: AbortSignal | undefined;
  onProgress?: ((data: JsonValue) => void) | undefined;
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
  slot: -1,
  stamp: 0,
};

export class TrustDomainPool {
  readonly #piscina: Piscina;
  readonly #limits: PoolLimits;
  readonly #inFlight = new Map<string, InFlight>();
  readonly #closers = new Set<(reply: PoolReply) => void>();
  readonly #onFault: (message: string) => void;
  /**
   * piscina gets at most two calls per thread: one running and one ready to start the moment the
   * thread is free (handing it over from here, a promise later, leaves the thread asleep in between).
   * The rest wait here.
   */
  readonly #capacity: number;
  readonly #waiting: Array<() => void> = [];
  #dispatched = 0;
  readonly #idleWaiters: Array<() => void> = [];
  /** When each dispatched call started running (see {@link CallStarts}); one slot per dispatched call. */
  readonly #starts: CallStarts;
  readonly #freeSlots: number[];
  #stamps = 0;
  /** No new calls (draining or destroyed). */
  #closed = false;
  /** Workers ended: nothing may start any more. */
  #destroyed = false;

  constructor(limits: PoolLimits, onFault: (message: string) => void) {
    this.#limits = limits;
    this.#onFault = onFault;
    this.#capacity = limits.maxThreads * 2;
    this.#starts = createCallStarts(this.#capacity);
    this.#freeSlots = Array.from({ length: this.#capacity }, (_, slot) => slot);
    this.#piscina = new Piscina({
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
      workerData: { allowAddons: limits.allowAddons, starts: this.#starts, ...limits.call },
      recordTiming: false,
    });
    this.#piscina.on('message', (message: WorkerMessage) => this.#onWorkerMessage(message));
    // Unheard, a pool 'error' (a worker failing between tasks) would crash the host.
    this.#piscina.on('error', (error: Error) =>
      onFault(`a worker failed outside any call: ${error.message}`),
    );
  }

  /** Calls waiting for a worker or running now. */
  get pendingCalls(): number {
    return this.#inFlight.size;
  }

  run(task: CallTask, hooks: PoolCallHooks = {}): Promise<PoolReply> {
    if (this.#closed) return Promise.resolve(failure('HOST_CLOSED', 'the tool host is closed'));
    return new Promise<PoolReply>((resolve) => {
      const kill = new KillSwitch();
      let answered = false;
      let deadline: NodeJS.Timeout | undefined;
      let grace: NodeJS.Timeout | undefined;

      const answer = (reply: PoolReply) => {
        if (answered) return;
        answered = true;
        clearTimeout(deadline);
        hooks.signal?.removeEventListener('abort', onCallerAbort);
        this.#closers.delete(answer);
        resolve(reply);
      };
      const onCallerAbort = () => {
        answer(failure('CALL_ABORTED', 'the call was aborted by its caller'));
        kill.abort();
      };
      const timeOut = () => {
        answer(failure('TOOL_TIMEOUT', `tool timed out after ${task.timeoutMs} ms`));
        // The worker aborted ctx.signal at the same moment; give the tool a short grace to
        // finish, then end the worker (piscina replaces it).
        grace = setTimeout(() => kill.abort(), this.#limits.timeoutGraceMs);
      };
      // The timeout counts from when the call starts running in a worker, not while it waits for
      // one. Checked at the deadline counted from dispatch: a call that started since is given the
      // rest of its time; one still waiting is checked again a timeout later.
      const checkDeadline = () => {
        if (answered) return;
        const startedAt = readCallStart(this.#starts, task);
        const left = startedAt === undefined ? task.timeoutMs : startedAt + task.timeoutMs - now();
        if (left <= 0) timeOut();
        else deadline = setTimeout(checkDeadline, Math.ceil(left));
      };

      const inFlight: InFlight = {
        onProgress: (data) => {
          inFlight.progressReceived += 1;
          if (!answered) hooks.onProgress?.(data);
          const held = inFlight.heldReply;
          if (held !== undefined && inFlight.progressReceived >= held.progressSent) {
            answer(held);
            this.#inFlight.delete(task.taskId);
          }
        },
        progressReceived: 0,
        heldReply: undefined,
        fault: undefined,
      };
      this.#inFlight.set(task.taskId, inFlight);
      this.#closers.add(answer);
      if (hooks.signal?.aborted) {
        onCallerAbort();
      } else {
        hooks.signal?.addEventListener('abort', onCallerAbort, { once: true });
      }

      this.#whenDispatchable(() => {
        if (answered) {
          // Aborted by its caller or the host closed while it waited: it never reaches a worker.
          this.#inFlight.delete(task.taskId);
          this.#release();
          return;
        }
        task.slot = this.#takeSlot();
        this.#stamps = this.#stamps >= 0x7fffffff ? 1 : this.#stamps + 1;
        task.stamp = this.#stamps;
        deadline = setTimeout(checkDeadline, task.timeoutMs);
        let lost = false;
        this.#piscina
          .run(task, { signal: kill })
          .then(
            (reply: CallReply) => {
              clearTimeout(deadline);
              // Progress travels on another port than piscina's reply and may arrive after it:
              // the reply waits until everything the tool emitted before it has been delivered.
              if (inFlight.progressReceived >= reply.progressSent) answer(reply);
              else inFlight.heldReply = reply;
            },
            (error: Error & { code?: string }) => {
              lost = true;
              answer(this.#explain(error, inFlight));
              this.#unstrand();
            },
          )
          .finally(() => {
            clearTimeout(grace);
            if (inFlight.heldReply === undefined || answered) this.#inFlight.delete(task.taskId);
            // A worker that ended mid-call (killed, exited, out of memory) could not remove the call's
            // temp dir itself.
            if (lost || kill.aborted || inFlight.fault !== undefined) {
              void rm(callTmpDir(this.#limits.call, task), {
                recursive: true,
                force: true,
                maxRetries: 2,
              }).catch(() => {});
            }
            this.#freeSlots.push(task.slot);
            this.#release();
          });
      });
    });
  }

  #whenDispatchable(dispatch: () => void): void {
    if (this.#dispatched < this.#capacity) {
      this.#dispatched += 1;
      dispatch();
    } else {
      this.#waiting.push(dispatch);
    }
  }

  /** A call left piscina: the next waiting call takes its place. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) {
      next();
      return;
    }
    this.#dispatched -= 1;
    if (this.#dispatched === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  #takeSlot(): number {
    const slot = this.#freeSlots.pop();
    // At most #capacity calls are dispatched, and each holds one slot until it leaves piscina.
    if (slot === undefined) throw new Error('toolhost: no free call slot (a bug)');
    clearCallStart(this.#starts, slot);
    return slot;
  }

  /**
   * piscina 5 with `minThreads: 0` replaces a removed worker (terminated at a timeout, exited, out of
   * memory) only up to `minThreads`: calls queued behind it would wait for the next `run`. A wake
   * task makes it start a worker, which takes the queued calls first.
   */
  #unstrand(): void {
    if (this.#destroyed || this.#piscina.queueSize === 0) return;
    if (this.#piscina.threads.length >= this.#limits.maxThreads) return;
    this.#piscina.run(WAKE_TASK).catch(() => {});
  }

  /** Ends every worker; calls still pending answer `HOST_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#destroyed = true;
    for (const answer of [...this.#closers])
      answer(failure('HOST_CLOSED', 'the tool host closed during the call'));
    await this.#piscina.destroy();
  }

  /** Stops taking calls and ends the workers once the calls already running have answered. */
  async drain(): Promise<void> {
    this.#closed = true;
    if (this.#dispatched > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    if (!this.#destroyed) await this.#piscina.close();
  }

  #onWorkerMessage(message: WorkerMessage): void {
    if (typeof message !== 'object' || message === null || message.tag !== WORKER_MESSAGE_TAG) return;
    if (message.type === 'fault' && message.taskId === null) {
      this.#onFault(`a worker failed outside any call: ${message.error.message}`);
      return;
    }
    const inFlight = message.taskId === null ? undefined : this.#inFlight.get(message.taskId);
    if (inFlight === undefined) return;
    if (message.type === 'progress') inFlight.onProgress(message.data);
    else inFlight.fault = message;
  }

  /** Explains why piscina rejected a call: what the worker reported before it ended, or how it ended. */
  #explain(error: Error & { code?: string }, inFlight: InFlight): PoolReply {
    if (inFlight.fault !== undefined) {
      return { ok: false, error: inFlight.fault.error, logs: inFlight.fault.logs, droppedLogBytes: 0 };
    }
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return failure(
        'TOOL_OUT_OF_MEMORY',
        `the tool ran out of memory (heap limit ${this.#limits.heapMb} MB)`,
      );
    }
    if (/worker exited with code/i.test(error.message)) {
      return failure('TOOL_EXITED', `the tool's worker ${error.message.replace(/^worker /i, '')}`);
    }
    return failure('TOOL_CRASHED', `the tool's worker crashed: ${error.message}`);
  }
}

/**
 * Ends one task's worker (piscina terminates the worker of an aborted task). piscina takes an
 * emitter as well as an AbortSignal; an AbortController per call costs more than the rest of the
 * host's bookkeeping, and this one is aborted only on a timeout or a caller's abort.
 */
class KillSwitch extends EventEmitter<{ abort: [] }> {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

function failure(code: ToolErrorCode, message: string): PoolReply {
  return { ok: false, error: { code, message }, logs: [], droppedLogBytes: 0 };
}
