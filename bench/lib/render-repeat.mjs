/** The repeat-runs scenario's targets and its section of the report. */
import { table } from './markdown.mjs';
import { formatMs, formatRatio } from './stats.mjs';

export function repeatRunsTargets(result) {
  if (result?.stats === undefined) return [];
  const { listKept, listReadAgain, callSeven, callOne } = result.stats;
  const listRatio = listKept.median / listReadAgain.median;
  const callRatio = callSeven.median / callOne.median;
  return [
    {
      id: 'repeat-list',
      target: `a second \`toolhost list\` of a ${result.modules}-module package with real dependencies ≤ 0.3 × the same with every module read again`,
      ratio: listRatio,
      measured: `${formatRatio(listRatio)} (${formatMs(listKept.median)} vs ${formatMs(listReadAgain.median)})`,
      met: listRatio <= 0.3,
    },
    {
      id: 'repeat-call',
      target: `\`toolhost call\` of one tool of that package ≤ 1.5 × a package holding only that tool`,
      ratio: callRatio,
      measured: `${formatRatio(callRatio)} (${formatMs(callSeven.median)} vs ${formatMs(callOne.median)})`,
      met: callRatio <= 1.5,
    },
  ];
}

export function repeatRunsSection(result) {
  const { listKept, listReadAgain, callSeven, callOne } = result.stats;
  const row = (label, summary, baseline) => [
    label,
    formatMs(summary.median),
    formatMs(summary.p99),
    formatRatio(summary.median / baseline.median),
    String(summary.n),
  ];
  return [
    '## 16. A second run: declarations kept in the store',
    '',
    `A package of ${result.modules} tool modules, each importing a real library (zod, undici, ajv, piscina, p-retry, the Anthropic SDK, fast-check), in the worker tier; each run a fresh process, interleaved, ${result.rounds} rounds. "Read again" removes the store's declarations before the run: what every run cost before they were kept.`,
    '',
    table(
      ['Run', 'median', 'p99', 'ratio', 'n'],
      [
        row('`toolhost list`, every module read again (the baseline)', listReadAgain, listReadAgain),
        row('`toolhost list`, declarations kept', listKept, listReadAgain),
        row('`toolhost call` of a one-tool package (the baseline)', callOne, callOne),
        row(`\`toolhost call\` of one tool of the ${result.modules}-module package`, callSeven, callOne),
      ],
    ),
    '',
  ].join('\n');
}
