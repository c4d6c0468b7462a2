/**
 * The baseline of the round-trip and throughput benchmarks: a bare piscina pool running the bench
 * tools' echo (fixtures/raw-worker.mjs), one thread per core by default, as toolhost's pools are.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';

export function rawPiscina(threads = availableParallelism()) {
  return new Piscina({
    filename: new URL('../fixtures/raw-worker.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: 30_000,
  });
}
