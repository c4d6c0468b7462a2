/**
 * Timing and statistics helpers shared by the scenarios. Times are milliseconds from
 * `performance.now()`; percentiles are nearest-rank over the measured samples (warm-up excluded).
 */

/** The q-quantile (0..1) of ascending `sorted` by nearest rank. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

/** n, median, p99, mean, min and max of a list of samples. */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs a full garbage collection when the process was started with --expose-gc. */
export async function collectGarbage() {
  if (typeof globalThis.gc !== 'function') return;
  globalThis.gc();
  await sleep(20);
  globalThis.gc();
}

function shuffle(items) {
  for (let index = items.length - 1; index > 0; index -= 1) {
    const other = Math.floor(Math.random() * (index + 1));
    [items[index], items[other]] = [items[other], items[index]];
  }
  return items;
}

/**
 * Times one call at a time, round-robin across `variants` in a fresh random order every cycle, so
 * the machine's noise falls on every variant alike. `every[name] = k` runs a slow variant only every
 * k-th cycle. The first `warmupCycles` cycles are not recorded.
 */
export async function interleave({ variants, cycles, warmupCycles, every = {} }) {
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let cycle = 0; cycle < warmupCycles + cycles; cycle += 1) {
    const names = Object.keys(variants).filter((name) => cycle % (every[name] ?? 1) === 0);
    for (const name of shuffle(names)) {
      const started = performance.now();
      await variants[name]();
      const elapsed = performance.now() - started;
      if (cycle >= warmupCycles) samples[name].push(elapsed);
    }
  }
  return samples;
}

/**
 * Runs `total` calls with at most `window` in flight; returns the wall time and every call's latency.
 * `makeCall(index)` starts call number `index`.
 */
export async function runWindow({ total, window, makeCall }) {
  const latencies = new Array(total);
  let next = 0;
  const lane = async () => {
    while (next < total) {
      const index = next;
      next += 1;
      const started = performance.now();
      await makeCall(index);
      latencies[index] = performance.now() - started;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(window, total) }, lane));
  return { wallMs: performance.now() - started, latencies };
}

/** Milliseconds as µs, ms or s, whichever reads best. */
export function formatMs(ms) {
  if (!Number.isFinite(ms)) return 'n/a';
  if (Math.abs(ms) < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (Math.abs(ms) < 100) return `${ms.toFixed(1)} ms`;
  if (Math.abs(ms) < 10_000) return `${ms.toFixed(0)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

export function formatRatio(ratio) {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : 'n/a';
}

export function formatMb(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Bytes as KB below a megabyte, MB above. */
export function formatBytes(bytes) {
  return Math.abs(bytes) < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : formatMb(bytes);
}

/** "1 round", "3 rounds". */
export function plural(count, noun) {
  if (count === 1) return `${count} ${noun}`;
  return `${count} ${noun}${noun.endsWith('s') ? 'es' : 's'}`;
}

/** Rounds every number in a plain value (for the JSON file). */
export function rounded(value, digits = 4) {
  if (typeof value === 'number') return Number.isFinite(value) ? Number(value.toFixed(digits)) : null;
  if (Array.isArray(value)) return value.map((item) => rounded(item, digits));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rounded(item, digits)]));
  }
  return value;
}
