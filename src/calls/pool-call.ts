/**
 * One call's life in a pool, as a host-side state machine that answers exactly once. Its deadline is
 * armed on the host's own clock at the moment the host's balancer hands the call to a worker, and
 * nothing a worker sends can move or cancel it. A reply is parsed before it is believed; a reply
 * that arrives before the progress and output sent ahead of it waits for them, but never past the
 * deadline.
 */
import {
  parseCallReply,
  parseCompactReply,
  parseLogs,
  parseProgressData,
  type ReplyLimits,
  type WorkerNote,
} from '../boundary/parse-call-reply.js';
import { type CallReply, MAX_PROGRESS_MESSAGES } from '../boundary/protocol.js';
import { safeMessage } from '../boundary/sanitize.js';
import { own, record } from '../boundary/untrusted.js';
import { AnswerOnce, type CallWaiters, failure } from './answer-once.js';
import type { ThreadListener } from './pool-threads.js';
import { ensureEnded, type TrackedWorker } from './thread-reaper.js';

export interface PoolCallLimits extends ReplyLimits {
  heapMb: number;
  timeoutGraceMs: number;
}

/**
 * A switch that is aborted once and holds one listener: a task's kill switch (piscina terminates the
 * worker of an aborted task). piscina adds its one listener through `addEventListener`, as for an
 * AbortSignal (`once` and `off` are what its types name for an emitter). An AbortController per call
 * costs more than the rest of the host's bookkeeping, and an EventEmitter (its listener table and
 * `once` wrapper) is still a good part of it. It is aborted when its call ends before its worker
 * does: a timeout, a caller's abort, a malformed reply.
 */
export class KillSwitch {
  aborted = false;
  #listener: (() => void) | undefined;

  once(_event: 'abort', listener: () => void): this {
    this.#listener = listener;
    return this;
  }

  removeListener(_event: 'abort', listener: () => void): this {
    if (this.#listener === listener) this.#listener = undefined;
    return this;
  }

  /** piscina's type for an emitter names `off`. */
  off(event: 'abort', listener: () => void): this {
    return this.removeListener(event, listener);
  }

  /** As piscina adds its listener to a signal: the one listener, `{ once: true }` as every listener here is. */
  addEventListener(event: 'abort', listener: () => void): void {
    this.once(event, listener);
  }

  removeEventListener(event: 'abort', listener: () => void): void {
    this.removeListener(event, listener);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.();
  }
}

/**
 * What a pool reads of a caller's signal (an AbortSignal): it adds one listener, once, and removes it
 * when the call answers.
 */
export interface CallerSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** What a call asks of the pool's pipeline (pipeline.ts) before it gives up its worker. */
export interface CallQueue {
  /** Takes the call back from the worker it is queued on: true unless it has started there. */
  withdraw(call: PoolCall): boolean;
  /** The call's worker is about to be ended: the call queued behind it moves. */
  aheadEnding(call: PoolCall): void;
}

export class PoolCall extends AnswerOnce implements ThreadListener {
  readonly kill = new KillSwitch();
  /** Counts the tasks this call was given to piscina as: a call taken back runs again. */
  attempt = 0;
  readonly #limits: PoolCallLimits;
  readonly #onStarted: (() => void) | undefined;
  readonly #queue: CallQueue | undefined;
  #begun = false;
  /** `onStarted` ran: once per call, however often it begins. */
  #announced = false;
  #grace: NodeJS.Timeout | undefined;
  #held: CallReply | undefined;
  #fault: (WorkerNote & { type: 'fault' }) | undefined;
  #worker: TrackedWorker | undefined;

  constructor(
    options: CallWaiters & {
      limits: PoolCallLimits;
      onStarted?: (() => void) | undefined;
      queue?: CallQueue | undefined;
    },
  ) {
    super(options);
    this.#limits = options.limits;
    this.#onStarted = options.onStarted;
    this.#queue = options.queue;
  }

  get taskId(): string {
    return this.task.taskId;
  }

  /** The worker it was handed to (once it was). */
  get worker(): TrackedWorker | undefined {
    return this.#worker;
  }

  /** The host's balancer gave the call to a worker: it starts now, and so does its timeout. */
  handed(worker: TrackedWorker): void {
    this.#worker = worker;
    this.begin();
  }

  /** Posted to a worker behind the call it runs (see pipeline.ts): it starts when that one leaves. */
  queued(worker: TrackedWorker): void {
    this.#worker = worker;
  }

  /** It runs on its worker from now, and its timeout counts from now. */
  begin(): void {
    if (this.#begun || this.answered) return;
    this.#begun = true;
    this.armDeadline(this.task.timeoutMs, () => this.#timeOut());
    if (this.#announced) return;
    this.#announced = true;
    this.#onStarted?.();
  }

  /**
   * Taken back from the worker it was queued on, to be given to piscina again: a call begun there
   * that its worker never started waits again without a deadline, and gets a full one where it runs.
   */
  requeued(): void {
    this.#worker = undefined;
    this.task.claim = undefined;
    this.attempt += 1;
    this.#begun = false;
    this.disarmDeadline();
  }

  message(note: WorkerNote): void {
    if (note.type === 'fault') {
      this.#fault ??= note;
      return;
    }
    if (note.type === 'log') {
      const logs = this.wantsLogs ? parseLogs(note.logs, this.#limits.maxLogChars) : undefined;
      this.logs(logs?.ok === true ? logs.value : undefined);
      this.#releaseHeld();
      return;
    }
    if (note.type !== 'progress') return;
    // Parsed only while someone may still want it (a call answered or past the cap drops it anyway).
    const wanted = !this.answered && this.progressReceived < MAX_PROGRESS_MESSAGES;
    const data = wanted ? parseProgressData(note.data) : undefined;
    this.progress(data?.ok === true ? data.value : undefined);
    this.#releaseHeld();
  }

  lostMessage(): void {
    this.progress(undefined);
    this.#releaseHeld();
  }

  /** piscina's task result: the worker's reply, if it is one. */
  replied(value: unknown): void {
    if (this.answered) return;
    // Only a pool worker sends the compact reply (a package's process never does).
    const parsed =
      typeof value === 'string'
        ? parseCompactReply(value, this.#limits.maxResultBytes)
        : parseCallReply(value, this.#limits);
    if (!parsed.ok) {
      this.answer(failure('TOOL_BAD_RESULT', `the tool's worker sent a malformed reply: ${parsed.reason}`));
      // A worker that sends such a reply is not running our code as written any more: replace it.
      this.#end();
      return;
    }
    // Progress and output travel on another port than piscina's reply and may arrive after it: the
    // reply waits until everything the worker sent before it has been delivered, or the deadline.
    if (this.#caughtUp(parsed.value)) this.answer(parsed.value);
    else this.#held = parsed.value;
  }

  /** piscina rejected the task: what the worker reported before it ended, or how it ended. */
  rejected(error: unknown): void {
    if (this.answered) return;
    const fault = this.#fault;
    if (fault !== undefined) {
      this.answer(failure(fault.code, fault.message, fault.logs, fault.stack));
      return;
    }
    const { code, message } = describeRejection(error);
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      this.answer(
        failure('TOOL_OUT_OF_MEMORY', `the tool ran out of memory (heap limit ${this.#limits.heapMb} MB)`),
      );
    } else if (/worker exited with code/i.test(message)) {
      this.answer(failure('TOOL_EXITED', `the tool's worker ${message.replace(/^worker /i, '')}`));
    } else {
      this.answer(failure('TOOL_CRASHED', `the tool's worker crashed: ${message}`));
    }
  }

  callerAborted(): void {
    this.answer(failure('CALL_ABORTED', 'the call was aborted by its caller'));
    // Queued and not started: its worker skips it, and the call it runs goes on.
    if (this.#queue?.withdraw(this) === true) return;
    this.#end();
  }

  hostClosed(): void {
    this.answer(failure('HOST_CLOSED', 'the tool host closed during the call'));
  }

  /** The call left piscina: no grace is needed any more. */
  settled(): void {
    clearTimeout(this.#grace);
  }

  #releaseHeld(): void {
    const held = this.#held;
    if (held !== undefined && this.#caughtUp(held)) this.answer(held);
  }

  #caughtUp(reply: CallReply): boolean {
    return this.progressReceived >= reply.progressSent && this.logNotesReceived >= (reply.logNotesSent ?? 0);
  }

  #timeOut(): void {
    // The tool replied in time; progress it claimed to send and never did is its own doing.
    if (this.#held !== undefined) {
      this.answer(this.#held);
      return;
    }
    this.timedOut();
    // A call queued behind it would wait through the grace, and its worker is likely to be ended.
    this.#queue?.aheadEnding(this);
    // The worker aborted ctx.signal at the same moment; give the tool a short grace to finish, then
    // end the worker (piscina replaces it).
    this.#grace = setTimeout(() => this.#end(), this.#limits.timeoutGraceMs);
  }

  /** Ends the worker the call runs on; one stuck in a child process gets that process killed. */
  #end(): void {
    this.#queue?.aheadEnding(this);
    // A reply its worker posted before the end counts (that of a call ahead of this one, say): piscina
    // rejects whatever the worker holds when it is ended, read or not.
    this.#worker?.readReplies?.();
    this.kill.abort();
    if (this.#worker !== undefined) void ensureEnded(this.#worker);
  }
}

/** A rejection's code and message, read safely: the worker may have sent the error itself. */
function describeRejection(error: unknown): { code: unknown; message: string } {
  if (error instanceof Error) {
    const { code } = error as Error & { code?: unknown };
    return { code, message: safeMessage(error.message, 'no message') };
  }
  const data = record(error);
  return { code: own(data, 'code'), message: safeMessage(own(data, 'message'), 'no message') };
}
