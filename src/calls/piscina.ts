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
