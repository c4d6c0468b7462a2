/** The many-packages section of the report: 200 loaded against 50, per tier, and a budget too small. */
import { formatMs, formatRatio } from './stats.mjs';

const mb = (value) => `${value.toFixed(1)} MB`;
const calls = (value) => `${Math.round(value).toLocaleString('en-US')}/s`;

export function manyPackagesSection(result) {
  const rows = [];
  for (const [tier, variants] of Object.entries(result.results)) {
    const [baselineName] = Object.keys(variants);
    const baseline = variants[baselineName];
    for (const [name, stats] of Object.entries(variants)) {
      rows.push(
        `| ${tier} | ${name} | ${mb(stats.rssWarmMb.median)} | ${mb(stats.perActiveMb.median)} | ${calls(stats.callsPerSecond.median)} | ${formatRatio(stats.callsPerSecond.median / baseline.callsPerSecond.median)} | ${formatMs(stats.latency.median)} / ${formatMs(stats.latency.p99)} | ${formatRatio(stats.latency.median / baseline.latency.median)} | ${stats.mostWorkers} |`,
      );
    }
  }
  return [
    `## Many packages on one host (${result.cycles} cycle(s) per variant, ${result.callsPerHost} calls per host, ${result.window} in flight)`,
    '',
    '| Tier | Active of loaded | Host RSS, warm | RSS per active package | Calls/s | vs baseline | Latency median / p99 | Median vs baseline | Most workers at once |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    "The baseline of each tier is its first row (only the active packages loaded). Host RSS is the host process's, plus its package processes' in the process tier; the RSS per active package is what the host grew by from loaded to every active package having its worker, over the active packages. `maxThreadsPerPool` is 1. The process tier runs 10 active of 40 loaded: loading reads each package in a process of its own, and 50 package processes would take most of the run.",
    '',
  ].join('\n');
}
