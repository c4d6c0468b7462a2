/**
 * One piscina pool per trust domain (a tool package, or a single module). Workers start lazily and
 * exit when idle. Every way a call can end (a reply, a timeout, an exit, running out of memory, a
 * crash, a caller's abort, the host closing) becomes exactly one {@link PoolReply}; a fault ends only
 * the worker it happened in and piscina replaces it.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ToolErrorCode } from './errors.js';
import {
  type CallReply,
  type CallTask,
  type CapturedLog,
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
  onStarted(): void;
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

export class TrustDomainPool {
  readonly #piscina: Piscina;
  readonly #limits: PoolLimits;
  readonly #inFlight = new Map<string, InFlight>();
  readonly #closers = new Set<(reply: PoolReply) => void>();
  readonly #onFault: (message: string) => void;
  /**
   * Calls waiting for a worker. piscina 5 with `minThreads: 0` strands the tasks in its own queue
   * when a worker is removed (terminated at a timeout, exited, out of memory): it replaces workers
   * only up to `minThreads`. So calls wait here and piscina gets at most `maxThreads` at once; each
   * then finds a ready worker or spawns one, since a removed worker no longer counts.
   */
  readonly #waiting: Array<() => void> = [];
  #running = 0;
  readonly #idleWaiters: Array<() => void> = [];
  #closed = false;

  constructor(limits: PoolLimits, onFault: (message: string) => void) {
    this.#limits = limits;
    this.#onFault = onFault;
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
      workerData: { allowAddons: limits.allowAddons },
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
      const kill = new AbortController();
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
      const terminate = () => {
        if (!kill.signal.aborted) kill.abort();
      };
      const onCallerAbort = () => {
        answer(failure('CALL_ABORTED', 'the call was aborted by its caller'));
        terminate();
      };
      // The timeout counts from when the call reaches a free worker, not while it waits for one.
      const armDeadline = () => {
        clearTimeout(deadline);
        if (answered) return;
        deadline = setTimeout(() => {
          answer(failure('TOOL_TIMEOUT', `tool timed out after ${task.timeoutMs} ms`));
          // The worker aborted ctx.signal at the same moment; give the tool a short grace to
          // finish, then end the worker (piscina replaces it).
          grace = setTimeout(terminate, this.#limits.timeoutGraceMs);
        }, task.timeoutMs);
      };

      const inFlight: InFlight = {
        // A worker's first call also waited for the worker to start: count from when it did.
        onStarted: armDeadline,
        onProgress: (data) => {
          inFlight.progressReceived += 1;
          if (!answered) hooks.onProgress?.(data);
          const held = inFlight.heldReply;
          if (held !== undefined && inFlight.progressReceived >= held.progressSent) answer(held);
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

      this.#whenWorkerFree(() => {
        if (answered) {
          // Aborted by its caller or the host closed while it waited: it never reaches a worker.
          this.#inFlight.delete(task.taskId);
          this.#release();
          return;
        }
        armDeadline();
        this.#piscina
          .run(task, { signal: kill.signal })
          .then(
            (reply: CallReply) => {
              // Progress travels on another port than piscina's reply and may arrive after it:
              // the reply waits until everything the tool emitted before it has been delivered.
              if (inFlight.progressReceived >= reply.progressSent) answer(reply);
              else inFlight.heldReply = reply;
            },
            (error: Error & { code?: string }) => answer(this.#explain(error, inFlight)),
          )
          .finally(() => {
            clearTimeout(grace);
            if (inFlight.heldReply === undefined || answered) this.#inFlight.delete(task.taskId);
            // A worker that was ended mid-call could not remove the call's temp dir itself.
            if (kill.signal.aborted || inFlight.fault !== undefined) {
              void rm(task.tmpDir, { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
            }
            this.#release();
          });
      });
    });
  }

  #whenWorkerFree(start: () => void): void {
    if (this.#running < this.#limits.maxThreads) {
      this.#running += 1;
      start();
    } else {
      this.#waiting.push(start);
    }
  }

  /** A call left its worker: the next waiting call takes its place. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) {
      next();
      return;
    }
    this.#running -= 1;
    if (this.#running === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Ends every worker; calls still pending answer `HOST_CLOSED`. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const answer of [...this.#closers])
      answer(failure('HOST_CLOSED', 'the tool host closed during the call'));
    await this.#piscina.destroy();
  }

  /** Stops taking calls and ends the workers once the calls already running have answered. */
  async drain(): Promise<void> {
    this.#closed = true;
    if (this.#running > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    await this.#piscina.close();
  }

  #onWorkerMessage(message: WorkerMessage): void {
    if (typeof message !== 'object' || message === null || message.tag !== WORKER_MESSAGE_TAG) return;
    if (message.type === 'fault' && message.taskId === null) {
      this.#onFault(`a worker failed outside any call: ${message.error.message}`);
      return;
    }
    const inFlight = message.taskId === null ? undefined : this.#inFlight.get(message.taskId);
    if (inFlight === undefined) return;
    if (message.type === 'started') inFlight.onStarted();
    else if (message.type === 'progress') inFlight.onProgress(message.data);
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

function failure(code: ToolErrorCode, message: string): PoolReply {
  return { ok: false, error: { code, message }, logs: [], droppedLogBytes: 0 };
}
