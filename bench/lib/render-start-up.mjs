/** The start-up scenario's targets and its section of the report. */
import { table } from './markdown.mjs';
import { formatMs, formatRatio } from './stats.mjs';

const BOUNDS = {
  importToolhost: { bound: 2, what: "a fresh process that imports toolhost (`import('toolhost')`)" },
  version: { bound: 1.5, what: '`toolhost --version`' },
};

export function startUpTargets(result) {
  if (result?.stats === undefined) return [];
  const floor = result.stats.bareNode.median;
  return Object.entries(BOUNDS).map(([key, { bound, what }]) => {
    const ratio = result.stats[key].median / floor;
    return {
      id: `start-up-${key}`,
      target: `${what} ≤ ${bound} × a bare \`node -e 0\` (medians)`,
      ratio,
      measured: `${formatRatio(ratio)} (${formatMs(result.stats[key].median)} vs ${formatMs(floor)})`,
      met: ratio <= bound,
    };
  });
}

export function startUpSection(result) {
  const floor = result.stats.bareNode;
  const rows = [
    ['bare `node -e 0` (the floor)', floor],
    ['`node -e "import(\'toolhost\')"`', result.stats.importToolhost],
    ['`toolhost --version`', result.stats.version],
  ].map(([label, summary]) => [
    label,
    formatMs(summary.median),
    formatMs(summary.p99),
    formatRatio(summary.median / floor.median),
    String(summary.n),
  ]);
  return [
    '## 15. Start-up',
    '',
    `Each a fresh Node process from spawn to exit, the three interleaved run by run, ${result.rounds} rounds.`,
    '',
    table(['Process', 'median', 'p99', 'vs bare node', 'n'], rows),
  ].join('\n');
}
