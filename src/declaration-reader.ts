/**
 * Reads one module's declaration in a throwaway worker with a heap bound, a time bound and an empty
 * environment. Whatever the module does at load or in its getters (loop, exhaust the heap, exit,
 * never settle, post messages of its own) ends as a {@link ReadOutcome}; nothing reaches the host.
 * Every message from the reader is parsed before it is read, and the listeners can't throw.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { LeftOutCode } from './errors.js';
import type { SchemaLimits } from './json-schema.js';
import { checkPlainData, MAX_DATA_DEPTH } from './plain-data.js';
import type { RawDeclaration, ReadError } from './protocol.js';
import { parseReadReply } from './read-reply.js';
import { parseWorkerMessage } from './reply-check.js';
import { PROBE_FROM_BYTES, SchemaProbe } from './schema-probe.js';
import { ensureEnded, type TrackedWorker, trackWorker } from './thread-reaper.js';

const READER_URL = new URL('../workers/read-declaration.js', import.meta.url);

export type ReadOutcome =
  | { state: 'read'; declaration: RawDeclaration }
  | { state: 'failed'; code: LeftOutCode; reason: string; location?: string; syntaxError?: boolean }
  | { state: 'timed-out'; reason: string };

export interface ReadLimits {
  heapMb: number;
  timeoutMs: number;
  schema: SchemaLimits;
  /** The longest a large schema may take to compile (in the probe) before its module is left out. */
  schemaCompileBudgetMs: number;
}

/** A reader's error as a failed read: where it happened, when the reader could say. */
function failedRead(error: ReadError): {
  code: LeftOutCode;
  reason: string;
  location?: string;
  syntaxError?: boolean;
} {
  const failed: { code: LeftOutCode; reason: string; location?: string; syntaxError?: boolean } = {
    code: error.code,
    reason: error.message,
  };
  if (error.location !== undefined) failed.location = error.location;
  if (error.syntaxError === true) failed.syntaxError = true;
  return failed;
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
  readonly #workers = new Set<TrackedWorker>();
  readonly #probe: SchemaProbe;
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  #closing = false;

  constructor(limits: ReadLimits, concurrency = availableParallelism()) {
    this.#limits = limits;
    this.#concurrency = Math.max(1, concurrency);
    this.#probe = new SchemaProbe({
      ...limits.schema,
      budgetMs: limits.schemaCompileBudgetMs,
      heapMb: limits.heapMb,
    });
  }

  /** The bounds a declaration's schema is checked against (by the probe here, and by whoever compiles it). */
  get schemaLimits(): SchemaLimits {
    return this.#limits.schema;
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
      const outcome = await this.#readInWorker(moduleUrl, execArgv);
      return outcome.state === 'read' ? await this.#probeSchema(outcome) : outcome;
    } finally {
      this.#running -= 1;
      this.#waiting.shift()?.();
    }
  }

  /** Ends every read in progress (they answer as failed), promptly: it never waits for a read's time bound. */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([
      this.#probe.close(),
      ...[...this.#workers].map((tracked) => {
        void tracked.worker.terminate();
        return ensureEnded(tracked);
      }),
    ]);
  }

  /** A large schema is compiled in the trusted probe first: one too costly to compile is left out. */
  async #probeSchema(outcome: ReadOutcome & { state: 'read' }): Promise<ReadOutcome> {
    const field = outcome.declaration.parameterSchema;
    if (field.state !== 'value') return outcome;
    const { maxSchemaBytes, maxSchemaDepth } = this.#limits.schema;
    const size = checkPlainData(field.value, {
      maxDepth: Math.min(maxSchemaDepth, MAX_DATA_DEPTH),
      maxBytes: maxSchemaBytes,
    });
    // Over the bounds (the host's check says so, without compiling) or small enough to compile at once.
    if (!size.ok || size.bytes < PROBE_FROM_BYTES) return outcome;
    const probed = await this.#probe.compile(field.value);
    if (probed.ok || this.#closing) return this.#closing ? CLOSED : outcome;
    return { state: 'failed', code: 'DECLARATION_INVALID', reason: probed.reason };
  }

  #readInWorker(moduleUrl: string, execArgv: string[]): Promise<ReadOutcome> {
    const { heapMb, timeoutMs } = this.#limits;
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
    const tracked = trackWorker(worker);
    this.#workers.add(tracked);

    return new Promise<ReadOutcome>((resolve) => {
      let outcome: ReadOutcome | undefined;
      let greeted = false;
      const settle = (value: ReadOutcome) => {
        outcome ??= value;
        clearTimeout(timer);
        void worker.terminate();
        // A module blocked in a child process would keep its thread (and the process) alive.
        void ensureEnded(tracked);
      };
      const timer = setTimeout(() => {
        settle({ state: 'timed-out', reason: `reading the declaration took longer than ${timeoutMs} ms` });
      }, timeoutMs);

      worker.on('message', (message: unknown) => {
        if (outcome !== undefined) return;
        // The reader says hello before it imports the module: only then can the host trust it.
        if (!greeted) {
          greeted = true;
          const hello = parseWorkerMessage(message, 0);
          if (hello?.type === 'hello') {
            tracked.osThreadId = hello.osThreadId;
            return;
          }
        }
        const parsed = parseReadReply(message);
        if (!parsed.ok) {
          settle({
            state: 'failed',
            code: 'DECLARATION_INVALID',
            reason: `the reader's reply is malformed: ${parsed.reason}`,
          });
          return;
        }
        const { reply } = parsed;
        settle(
          reply.ok
            ? { state: 'read', declaration: reply.declaration }
            : { state: 'failed', ...failedRead(reply.error) },
        );
      });
      // A message the host can't deserialize (nested too deep for its stack, say).
      worker.on('messageerror', () => {
        settle({
          state: 'failed',
          code: 'DECLARATION_INVALID',
          reason: "the reader's reply could not be read by the host (nested too deep, or not plain data)",
        });
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
                reason: `reading the declaration crashed: ${String(error?.message)}`,
              },
        );
      });
      worker.once('exit', (exitCode) => {
        this.#workers.delete(tracked);
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
