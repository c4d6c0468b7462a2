/**
 * piscina, loaded when the first pool is made: importing toolhost doesn't pay for it (about a third
 * of the import's time), and a host whose tools are all its own never loads it. Its CommonJS build,
 * because a pool is made synchronously; piscina's ES entry only re-exports that same build.
 */
import { createRequire } from 'node:module';
import type * as Piscina from 'piscina';

let loaded: typeof Piscina | undefined;

export function piscina(): typeof Piscina {
  loaded ??= createRequire(import.meta.url)('piscina') as typeof Piscina;
  return loaded;
}

/**
 * piscina's key for a task's queue options (its `queueOptionsSymbol`), a registered symbol: taken
 * here without loading piscina.
 */
export const queueOptionsSymbol: unique symbol = Symbol.for('Piscina.queueOptions') as never;

/**
 * A function that reads, now, the replies a worker has posted that piscina has not read yet, or
 * undefined if this piscina doesn't have what it takes. `view` is piscina's view of a worker (as its
 * `workerCreate` event and its balancer get it); its internal worker record is under a symbol of
 * its own. piscina rejects the tasks a worker holds when the worker exits, without first reading
 * what the worker posted; a worker whose next call ends it right after it replied (a call queued on
 * it, see pipeline.ts) would lose that reply.
 */
export function replyReader(view: object): (() => void) | undefined {
  const key = Object.getOwnPropertySymbols(view).find(
    (symbol) => symbol.description === 'Piscina.kWorkerData',
  );
  const record = key === undefined ? undefined : (view as Record<symbol, unknown>)[key];
  const read = (record as { processPendingMessages?: unknown } | undefined)?.processPendingMessages;
  if (typeof read !== 'function') return undefined;
  return () => read.call(record);
}
