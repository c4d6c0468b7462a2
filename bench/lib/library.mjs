/**
 * Where the benchmarks find toolhost: the built library in ../../dist, or another build named by
 * TOOLHOST_BENCH_DIST (a folder laid out like dist/, used to measure a prototype change side by side).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const override = process.env.TOOLHOST_BENCH_DIST;

export const distUrl = override
  ? new URL(`${pathToFileURL(resolve(override)).href}/`)
  : new URL('../../dist/', import.meta.url);

export function importToolhost() {
  return import(new URL('src/index.js', distUrl).href);
}

export const benchToolsDir = new URL('../fixtures/bench-tools/', import.meta.url);
export const freshWorkerUrl = new URL('../fixtures/fresh-worker.mjs', import.meta.url);
export const bareWorkerUrl = new URL('../fixtures/bare-worker.mjs', import.meta.url);

/** A logger that keeps the host's warnings out of the benchmark's output but counts them. */
export function quietLogger() {
  const counts = { info: 0, warn: 0, error: 0 };
  return {
    counts,
    info: () => {
      counts.info += 1;
    },
    warn: () => {
      counts.warn += 1;
    },
    error: () => {
      counts.error += 1;
    },
  };
}
