/**
 * Reads modules' declarations, each in a throwaway worker with a heap bound, a time bound and an
 * empty environment (see {@link readInWorker}): nothing a module does while it is read reaches the
 * host. A process-tier package's reads run in a process of its own instead (`via`), and what that
 * process sends is parsed again on the host. Either way a large schema is then probed here.
 */
import { availableParallelism } from 'node:os';
import { checkPlainData, MAX_DATA_DEPTH } from '../boundary/plain-data.js';
import type { ReadOutcome } from '../boundary/protocol.js';
import { ensureEnded, type TrackedWorker } from '../calls/thread-reaper.js';
import type { SchemaLimits } from '../schema/json-schema.js';
import { PROBE_FROM_BYTES, SchemaProbe } from '../schema/probe.js';
import { Gate } from '../shared/limit.js';
import type { CacheKey, DeclarationCache } from './declaration-cache.js';
import { CLOSED_OUTCOME, readInWorker } from './read-worker.js';

/** Reads one module somewhere other than a worker of the host (a package's own process). */
export type RawRead = (moduleUrl: string) => Promise<ReadOutcome>;

export interface ReadLimits {
  heapMb: number;
  timeoutMs: number;
  schema: SchemaLimits;
  /** The longest a large schema may take to compile (in the probe) before its module is left out. */
  schemaCompileBudgetMs: number;
}

const CLOSED = CLOSED_OUTCOME;

/** Runs at most `concurrency` reads at once (one worker each). */
export class DeclarationReader {
  readonly #limits: ReadLimits;
  readonly #gate: Gate;
  readonly #workers = new Set<TrackedWorker>();
  readonly #probe: SchemaProbe;
  readonly #cache: DeclarationCache | undefined;
  #closing = false;

  /**
   * `cache`: where reads that ended well are kept across runs (see declaration-cache.ts); none, and
   * every module is read afresh.
   */
  constructor(limits: ReadLimits, concurrency = availableParallelism(), cache?: DeclarationCache) {
    this.#limits = limits;
    this.#cache = cache;
    this.#gate = new Gate(Math.max(1, concurrency));
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

  /**
   * Reads one module; `execArgv` is its trust domain's (the isolation tier's flags). With `via`, the
   * read itself happens there (the host still bounds how many run at once, and probes the schema).
   */
  async read(
    moduleUrl: string,
    execArgv: string[],
    via?: RawRead,
    cacheKey?: CacheKey,
  ): Promise<ReadOutcome> {
    const cache = cacheKey === undefined ? undefined : this.#cache;
    const cached = await cache?.get(cacheKey as CacheKey);
    if (cached !== undefined) {
      if (this.#closing) return CLOSED;
      // Read back from the store, it is checked as a fresh read is: the probe here, the rest after.
      return await this.#probeSchema(cached);
    }
    const outcome = await this.#readNow(moduleUrl, execArgv, via);
    if (cache !== undefined && outcome.state === 'read') await cache.set(cacheKey as CacheKey, outcome);
    return outcome.state === 'read' ? await this.#probeSchema(outcome) : outcome;
  }

  async #readNow(moduleUrl: string, execArgv: string[], via: RawRead | undefined): Promise<ReadOutcome> {
    await this.#gate.enter();
    try {
      // A read asked for (or let through) after close() would start a worker nobody ends.
      if (this.#closing) return CLOSED;
      const outcome =
        via === undefined
          ? await readInWorker(moduleUrl, execArgv, {
              heapMb: this.#limits.heapMb,
              timeoutMs: this.#limits.timeoutMs,
              workers: this.#workers,
              closing: () => this.#closing,
            })
          : await via(moduleUrl);
      return outcome;
    } finally {
      this.#gate.leave();
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
    for (const name of ['parameterSchema', 'outputSchema'] as const) {
      const field = outcome.declaration[name];
      if (field.state !== 'value') continue;
      const { maxSchemaBytes, maxSchemaDepth } = this.#limits.schema;
      const size = checkPlainData(field.value, {
        maxDepth: Math.min(maxSchemaDepth, MAX_DATA_DEPTH),
        maxBytes: maxSchemaBytes,
      });
      // Over the bounds (the host's check says so, without compiling) or small enough to compile at once.
      if (!size.ok || size.bytes < PROBE_FROM_BYTES) continue;
      const probed = await this.#probe.compile(field.value);
      if (this.#closing) return CLOSED;
      if (!probed.ok) {
        const reason = name === 'parameterSchema' ? probed.reason : `outputSchema: ${probed.reason}`;
        return { state: 'failed', code: 'DECLARATION_INVALID', reason };
      }
    }
    return outcome;
  }
}
