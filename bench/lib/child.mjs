/**
 * The scenario side of run.js's protocol: each scenario runs in a child process of its own (so its
 * memory figures are its own) and hands back one JSON result.
 */
import { writeFileSync } from 'node:fs';

export const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';

/** Scales an iteration count down for --quick. */
export function iterations(full, quickCount) {
  return quick ? quickCount : full;
}

export function report(result) {
  const json = JSON.stringify(result);
  if (process.env.BENCH_RESULT_FILE === undefined) process.stdout.write(`${json}\n`);
  else writeFileSync(process.env.BENCH_RESULT_FILE, json);
}

export function log(message) {
  process.stderr.write(`  ${message}\n`);
}
