/**
 * Reads one module's declaration in a throwaway worker with a heap bound, a time bound and an empty
 * environment. Whatever the module does at load or in its getters (loop, exhaust the heap, exit,
 * never settle) ends as a {@link ReadOutcome}; nothing reaches the host.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { LeftOutCode } from './errors.js';
import type { RawDeclaration, ReadReply, ReadRequest } from './protocol.js';

const READER_URL = new URL('../workers/read-declaration.js', import.meta.url);

export type ReadOutcome =
  | { state: 'read'; declaration: RawDeclaration }
  | { state: 'failed'; code: LeftOutCode; reason: string }
  | { state: 'timed-out'; reason: string };

export interface ReadLimits {
  heapMb: number;
  timeoutMs: number;
}

const CLOSED: ReadOutcome = {
  state: 'failed',
  code: 'DECLARATION_EXITED',
  reason: 'the tool host closed before the declaration was read',
};

/** Runs at most `concurrency` reads at once (one worker each). */
export class DeclarationReader {
  readonly #limits: ReadLimits;
  readonly #concurrency: number;
  readonly #workers = new Set<Worker>();
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  #closing = false;

  constructor(limits: ReadLimits, concurrency = availableParallelism()) {
    this.#limits = limits;
    this.#concurrency = Math.max(1, concurrency);
  }

  /** Reads one module; `execArgv` is its trust domain's (the isolation tier's flags). */
  async read(moduleUrl: string, execArgv: string[]): Promise<ReadOutcome> {
    if (this.#running >= this.#concurrency) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    // A read asked for (or let through) after close() would start a worker nobody ends.
    if (this.#closing) {
      this.#waiting.shift()?.();
      return CLOSED;
    }
    this.#running += 1;
    try {
      return await this.#readInWorker(moduleUrl, execArgv);
    } finally {
      this.#running -= 1;
      this.#waiting.shift()?.();
    }
  }

  /** Ends every read in progress (they answer as failed). */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#workers].map((worker) => worker.terminate()));
  }

  #readInWorker(moduleUrl: string, execArgv: string[]): Promise<ReadOutcome> {
    const { heapMb, timeoutMs } = this.#limits;
    const request: ReadRequest = { moduleUrl };
    const worker = new Worker(READER_URL, {
      workerData: request,
      env: {},
      execArgv,
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(16, heapMb) },
      // What a module prints while it is read is noise for the host's streams: drop it.
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    this.#workers.add(worker);

    return new Promise<ReadOutcome>((resolve) => {
      let outcome: ReadOutcome | undefined;
      const settle = (value: ReadOutcome) => {
        outcome ??= value;
        clearTimeout(timer);
        void worker.terminate();
      };
      const timer = setTimeout(() => {
        settle({ state: 'timed-out', reason: `reading the declaration took longer than ${timeoutMs} ms` });
      }, timeoutMs);

      worker.once('message', (reply: ReadReply) => {
        settle(
          reply.ok
            ? { state: 'read', declaration: reply.declaration }
            : { state: 'failed', code: reply.error.code, reason: reply.error.message },
        );
      });
      worker.on('error', (error: Error & { code?: string }) => {
        settle(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? {
                state: 'failed',
                code: 'DECLARATION_OUT_OF_MEMORY',
                reason: `reading the declaration ran out of memory (heap limit ${heapMb} MB)`,
              }
            : {
                state: 'failed',
                code: 'DECLARATION_CRASHED',
                reason: `reading the declaration crashed: ${error.message}`,
              },
        );
      });
      worker.once('exit', (exitCode) => {
        this.#workers.delete(worker);
        // Terminated by close(), the module did nothing wrong: say so rather than blame it.
        if (this.#closing) settle(CLOSED);
        settle({
          state: 'failed',
          code: 'DECLARATION_EXITED',
          reason: `the module exited (code ${exitCode}) before its declaration was read`,
        });
        resolve(outcome as ReadOutcome);
      });
    });
  }
}
