/** The many-packages section of the report: 200 packages loaded against 50, per tier, and a budget too small. */
import { formatMs, formatRatio } from './stats.mjs';

const mb = (value) => `${value.toFixed(1)} MB`;
const calls = (value) => `${Math.round(value).toLocaleString('en-US')}/s`;

export function manyPackagesSection(result) {
  const rows = [];
  for (const [tier, variants] of Object.entries(result.results)) {
    const baseline = Object.values(variants)[0];
    for (const [name, stats] of Object.entries(variants)) {
      rows.push(
        `| ${tier} | ${name} | ${mb(stats.warmMb)} | ${mb(stats.loadedMb)} | ${mb(stats.perActiveMb)} | ${calls(stats.callsPerSecond.median)} | ${formatRatio(stats.callsPerSecond.median / baseline.callsPerSecond.median)} | ${formatMs(stats.latency.median)} / ${formatMs(stats.latency.p99)} | ${formatRatio(stats.latency.median / baseline.latency.median)} | ${stats.mostWorkers} of ${stats.maxWorkers} |`,
      );
    }
  }
  return [
    `## 14. Many packages on one host (${result.rounds} rounds of alternating batches, ${result.callsPerBatch} calls a batch, ${result.window} in flight)`,
    '',
    '| Tier | Active of loaded | Host RSS added, warm | of it, loading | RSS per active package | Calls/s (median batch) | vs baseline | Latency median / p99 | Median vs baseline | Most workers at once |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    ...longRunLines(result),
    "Each tier's baseline is its first row (only the active packages loaded). RSS is the host process's, plus its package processes' in the process tier, measured as each host is built (before the next one); the RSS per active package is what the host grew by from loaded to every active package having its worker, over the active packages. `maxThreadsPerPool` is 1. The `maxWorkers` row has fewer workers than active packages, and batches a quarter as long: its calls take turns in runs, and one call in a run starts a worker. The process tier runs 10 active of 40 loaded (5 of 20 in a quick run): loading reads each package in a process of its own.",
    '',
  ].join('\n');
}

/** The budget hosts in one long run each (a run without the batches' restarts at package 0). */
function longRunLines(result) {
  const runs = Object.entries(result.longRuns ?? {});
  if (runs.length === 0) return [];
  const each = runs.map(
    ([tier, run]) =>
      `${tier} ${calls(run.callsPerSecond)} (${run.callsPerSwitch.toFixed(1)} calls per switch)`,
  );
  return [
    `The \`maxWorkers\` hosts again, each in one run of ${runs[0][1].calls.toLocaleString('en-US')} calls after the batches (the rotation without a batch's restart at package 0, as a caller that keeps calling): ${each.join(', ')}.`,
    '',
  ];
}

/**
 * Issue 47's targets for a budget smaller than the active packages, per tier: calls/s against the
 * same packages unconstrained (the tier's first row) ≥ 0.3×, p99 latency within 10× of that row's,
 * and never more workers at once than the budget.
 */
export function manyPackagesTargets(result) {
  if (result?.results === undefined) return [];
  const targets = [];
  for (const [tier, variants] of Object.entries(result.results)) {
    const entries = Object.entries(variants);
    const [, baseline] = entries[0];
    const budgeted = entries.find(([name]) => name.includes('maxWorkers'));
    if (budgeted === undefined) continue;
    const [name, stats] = budgeted;
    const ratio = stats.callsPerSecond.median / baseline.callsPerSecond.median;
    const p99 = stats.latency.p99 / baseline.latency.p99;
    targets.push(
      {
        id: `many-packages-${tier}`,
        target: `${tier} tier, ${name}: calls/s ≥ 0.3 × unconstrained, p99 ≤ 10 ×`,
        ratio,
        measured: `${formatRatio(ratio)} (${calls(stats.callsPerSecond.median)} vs ${calls(baseline.callsPerSecond.median)}), p99 ${formatRatio(p99)}`,
        met: ratio >= 0.3 && p99 <= 10,
      },
      {
        id: `many-packages-cap-${tier}`,
        target: `${tier} tier, ${name}: most workers at once ≤ the budget`,
        ratio: stats.mostWorkers / stats.maxWorkers,
        measured: `${stats.mostWorkers} of ${stats.maxWorkers}`,
        met: stats.mostWorkers <= stats.maxWorkers,
      },
    );
  }
  return targets;
}
