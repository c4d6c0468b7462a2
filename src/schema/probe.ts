/**
 * A large parameter schema is compiled first in a trusted worker of its own (see
 * `schema/probe-worker.ts`), timed by the host: one that takes longer than the budget to compile
 * there would stop the host's event loop about as long, so its module is left out instead. Small
 * schemas skip this (the costliest shapes we found compile in a few ms below
 * {@link PROBE_FROM_BYTES}). The probe is never run in the declaration reader: the module being read
 * runs there and could fake the timing.
 */
import { Worker } from 'node:worker_threads';
import { ensureEnded, type TrackedWorker, trackWorker } from '../calls/thread-reaper.js';
import { srcFile } from '../own-files.js';
import type { SchemaLimits } from './json-schema.js';

const PROBE_URL = srcFile('schema/probe-worker.js');

/** Schemas at least this large (about their JSON size) are compiled in the probe before the host. */
export const PROBE_FROM_BYTES = 8192;

/** An idle probe worker exits after this long. */
const IDLE_MS = 10_000;

export type ProbeOutcome = { ok: true } | { ok: false; reason: string };

interface Pending {
  id: number;
  schema: unknown;
  resolve(outcome: ProbeOutcome): void;
}

export interface ProbeLimits extends SchemaLimits {
  /** The longest a compile may take in the probe. */
  budgetMs: number;
  heapMb: number;
}

/** One probe worker per host, started on first use; compiles one schema at a time. */
export class SchemaProbe {
  readonly #limits: ProbeLimits;
  readonly #queue: Pending[] = [];
  #worker: TrackedWorker | undefined;
  #ready = false;
  #current: { pending: Pending; timer: NodeJS.Timeout } | undefined;
  #idle: NodeJS.Timeout | undefined;
  #ids = 0;
  #closed = false;

  constructor(limits: ProbeLimits) {
    this.#limits = limits;
  }

  /** Compiles `schema` in the probe; resolves with whether it compiled, validly, within the budget. */
  compile(schema: unknown): Promise<ProbeOutcome> {
    if (this.#closed) return Promise.resolve({ ok: false, reason: 'the tool host closed' });
    return new Promise((resolve) => {
      this.#queue.push({ id: ++this.#ids, schema, resolve });
      this.#next();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const pending of this.#queue.splice(0))
      pending.resolve({ ok: false, reason: 'the tool host closed' });
    this.#finish({ ok: false, reason: 'the tool host closed' });
    await this.#stop();
  }

  #next(): void {
    if (this.#current !== undefined || this.#queue.length === 0) return;
    clearTimeout(this.#idle);
    const worker = this.#worker ?? this.#start();
    if (!this.#ready) return;
    const pending = this.#queue.shift() as Pending;
    const { budgetMs, maxSchemaBytes, maxSchemaDepth } = this.#limits;
    const timer = setTimeout(() => {
      this.#finish({ ok: false, reason: `parameterSchema takes longer than ${budgetMs} ms to compile` });
      // The worker is still compiling: end it; the next schema gets a fresh one.
      void this.#stop();
    }, budgetMs);
    this.#current = { pending, timer };
    worker.worker.ref();
    worker.worker.postMessage({
      id: pending.id,
      schema: pending.schema,
      limits: { maxSchemaBytes, maxSchemaDepth },
    });
  }

  #start(): TrackedWorker {
    const worker = new Worker(PROBE_URL, {
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: this.#limits.heapMb },
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    const tracked = trackWorker(worker);
    this.#worker = tracked;
    this.#ready = false;
    worker.on('message', (message: unknown) => {
      if (this.#worker !== tracked) return;
      if (message === 'ready') {
        this.#ready = true;
        this.#next();
        return;
      }
      const reply = message as { id?: unknown; ok?: unknown; message?: unknown } | null;
      if (this.#current === undefined || reply?.id !== this.#current.pending.id) return;
      this.#finish(
        reply.ok === true
          ? { ok: true }
          : {
              ok: false,
              reason: typeof reply.message === 'string' ? reply.message : 'parameterSchema does not compile',
            },
      );
      this.#next();
    });
    const lost = (why: string) => {
      if (this.#worker !== tracked) return;
      this.#worker = undefined;
      this.#ready = false;
      this.#finish({ ok: false, reason: `compiling parameterSchema ${why}` });
      this.#next();
    };
    worker.on('error', (error: Error & { code?: string }) =>
      lost(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `ran out of memory (${this.#limits.heapMb} MB)`
          : 'crashed',
      ),
    );
    worker.on('exit', () => lost('ended the compiler'));
    return tracked;
  }

  #finish(outcome: ProbeOutcome): void {
    const current = this.#current;
    if (current === undefined) return;
    this.#current = undefined;
    clearTimeout(current.timer);
    current.pending.resolve(outcome);
    if (this.#queue.length === 0 && this.#worker !== undefined) {
      this.#worker.worker.unref();
      this.#idle = setTimeout(() => void this.#stop(), IDLE_MS).unref();
    }
  }

  async #stop(): Promise<void> {
    clearTimeout(this.#idle);
    const tracked = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    if (tracked === undefined) return;
    void tracked.worker.terminate();
    await ensureEnded(tracked);
    if (!this.#closed) this.#next();
  }
}
