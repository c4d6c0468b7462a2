/**
 * One declaration read in a throwaway worker with a heap bound, a time bound and an empty
 * environment. Whatever the module does at load or in its getters (loop, exhaust the heap, exit,
 * never settle, post messages of its own) ends as a {@link ReadOutcome}. Every message from the
 * reader is parsed before it is read, and the listeners can't throw. The host runs it for the
 * worker and strict tiers; a package's process runs it for the process tier (the host parses what
 * that process sends again).
 */
import { Worker } from 'node:worker_threads';
import { parseWorkerMessage } from '../boundary/parse-call-reply.js';
import { parseReadReply } from '../boundary/parse-read-reply.js';
import type { ReadError, ReadOutcome } from '../boundary/protocol.js';
import { ensureEnded, type TrackedWorker, trackWorker } from '../calls/thread-reaper.js';
import { workersFile } from '../own-files.js';

const READER_URL = workersFile('read-declaration.js');

/** A reader's error as a failed read: where it happened, when the reader could say. */
function failedRead(error: ReadError): ReadOutcome & { state: 'failed' } {
  const failed: ReadOutcome & { state: 'failed' } = {
    state: 'failed',
    code: error.code,
    reason: error.message,
  };
  if (error.location !== undefined) failed.location = error.location;
  if (error.syntaxError === true) failed.syntaxError = true;
  return failed;
}

export const CLOSED_OUTCOME: ReadOutcome = {
  state: 'failed',
  code: 'DECLARATION_EXITED',
  reason: 'the tool host closed before the declaration was read',
};

export interface WorkerReadOptions {
  heapMb: number;
  timeoutMs: number;
  /** Every reader worker still running, so that whoever closes can end them. */
  workers: Set<TrackedWorker>;
  /** Whether the reads are being ended (a worker terminated then did nothing wrong). */
  closing: () => boolean;
}

/** Reads one module in a worker of its own, started with `execArgv` (its trust domain's flags). */
export function readInWorker(
  moduleUrl: string,
  execArgv: string[],
  options: WorkerReadOptions,
): Promise<ReadOutcome> {
  const { heapMb, timeoutMs } = options;
  const worker = startReader(moduleUrl, execArgv, heapMb);
  const tracked = trackWorker(worker);
  options.workers.add(tracked);

  return new Promise<ReadOutcome>((resolve) => {
    const read = new ReadSettlement(worker, tracked, resolve);
    read.startTimer(timeoutMs);
    worker.on('message', replyListener(tracked, read));
    // A message the host can't deserialize (nested too deep for its stack, say).
    worker.on('messageerror', () => {
      read.settle({
        state: 'failed',
        code: 'DECLARATION_INVALID',
        reason: "the reader's reply could not be read by the host (nested too deep, or not plain data)",
      });
    });
    worker.on('error', (error: Error & { code?: string }) => read.settle(workerErrorOutcome(error, heapMb)));
    worker.once('exit', (exitCode) => {
      options.workers.delete(tracked);
      // Terminated by close(), the module did nothing wrong: say so rather than blame it.
      if (options.closing()) read.settle(CLOSED_OUTCOME);
      read.settle({
        state: 'failed',
        code: 'DECLARATION_EXITED',
        reason: `the module exited (code ${exitCode}) before its declaration was read`,
      });
      read.resolveNow();
    });
  });
}

/** The reader's thread: bounded heap, empty environment, its printing drained and dropped. */
function startReader(moduleUrl: string, execArgv: string[], heapMb: number): Worker {
  const worker = new Worker(READER_URL, {
    workerData: { moduleUrl },
    env: {},
    execArgv,
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(16, heapMb) },
    // What a module prints while it is read is noise for the host's streams: drop it.
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
  return worker;
}

/**
 * The read's one outcome: the first settle decides it, and every settle (later ones too) ends the
 * worker again and answers once the thread is gone.
 */
class ReadSettlement {
  outcome: ReadOutcome | undefined;
  readonly #worker: Worker;
  readonly #tracked: TrackedWorker;
  readonly #resolve: (outcome: ReadOutcome) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(worker: Worker, tracked: TrackedWorker, resolve: (outcome: ReadOutcome) => void) {
    this.#worker = worker;
    this.#tracked = tracked;
    this.#resolve = resolve;
  }

  startTimer(timeoutMs: number): void {
    this.#timer = setTimeout(() => {
      this.settle({ state: 'timed-out', reason: `reading the declaration took longer than ${timeoutMs} ms` });
    }, timeoutMs);
  }

  settle(value: ReadOutcome): void {
    this.outcome ??= value;
    clearTimeout(this.#timer);
    void this.#worker.terminate();
    // A module blocked in a child process would keep its thread (and the process) alive. One
    // blocked where nothing ends it (a read from a pipe nobody writes) never exits: once it is let
    // go, the read answers anyway.
    void ensureEnded(this.#tracked).then(() => this.resolveNow());
  }

  /** Answers with the outcome decided so far, without waiting for the thread. */
  resolveNow(): void {
    this.#resolve(this.outcome as ReadOutcome);
  }
}

/** Listens for the reader's hello (its first message, if it is one) and then its one reply. */
function replyListener(tracked: TrackedWorker, read: ReadSettlement): (message: unknown) => void {
  let greeted = false;
  return (message) => {
    if (read.outcome !== undefined) return;
    // The reader says hello before it imports the module: only then can the host trust it.
    if (!greeted) {
      greeted = true;
      const hello = parseWorkerMessage(message, 0);
      if (hello?.type === 'hello') {
        tracked.osThreadId = hello.osThreadId;
        return;
      }
    }
    read.settle(replyOutcome(message));
  };
}

/** The reader's reply, parsed as untrusted, as an outcome. */
function replyOutcome(message: unknown): ReadOutcome {
  const parsed = parseReadReply(message);
  if (!parsed.ok) {
    return {
      state: 'failed',
      code: 'DECLARATION_INVALID',
      reason: `the reader's reply is malformed: ${parsed.reason}`,
    };
  }
  const { reply } = parsed;
  return reply.ok ? { state: 'read', declaration: reply.declaration } : failedRead(reply.error);
}

/** A worker `'error'`: out of memory, or a crash with its message. */
function workerErrorOutcome(error: Error & { code?: string }, heapMb: number): ReadOutcome {
  return error.code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? {
        state: 'failed',
        code: 'DECLARATION_OUT_OF_MEMORY',
        reason: `reading the declaration ran out of memory (heap limit ${heapMb} MB)`,
      }
    : {
        state: 'failed',
        code: 'DECLARATION_CRASHED',
        reason: `reading the declaration crashed: ${String(error?.message)}`,
      };
}
