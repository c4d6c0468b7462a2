/**
 * `toolhost serve`'s targets (section 8's rows against host.call, issue 47) and section 20, where
 * a serve `tools/call` goes, layer by layer (bench/scenarios/serve-parts.mjs).
 */
import { table } from './markdown.mjs';
import { formatMs, formatRatio } from './stats.mjs';

/** serve `tools/call` ≤ 2× host.call over stdio and ≤ 2.5× over HTTP, for both protocol eras. */
export function serveTargets(result) {
  if (result?.roundTrip?.hostCall === undefined) return [];
  const base = result.roundTrip.hostCall.median;
  const rows = [
    ['stdio', 'over stdio, 2025-11-25', 2],
    ['stdioModern', 'over stdio, 2026-07-28', 2],
    ['http', 'over Streamable HTTP, 2025-11-25', 2.5],
    ['httpModern', 'over Streamable HTTP, 2026-07-28', 2.5],
  ];
  return rows.flatMap(([name, label, bound]) => {
    const stats = result.roundTrip[name];
    if (stats === undefined) return [];
    const ratio = stats.median / base;
    return [
      {
        id: `serve-${name}`,
        target: `\`toolhost serve\` \`tools/call\` ${label} ≤ ${bound} × host.call (medians)`,
        ratio,
        measured: `${formatRatio(ratio)} (${formatMs(stats.median)} vs ${formatMs(base)})`,
        met: ratio <= bound,
      },
    ];
  });
}

const PART_LABELS = {
  hostCall: 'host.call in the same process',
  serverInProcess: 'toolhost’s MCP server in this process, spoken to by hand (messages cloned through JSON)',
  sdkInProcess:
    'the official client and toolhost’s MCP server in this process (messages cloned through JSON)',
  echoOne: 'a line echoed by one other node process (no parsing, no checks)',
  echoTwo: 'a line through two node processes in a chain, echoed by the second',
  hostingRaw: 'the relay’s hosting process alone, its channel spoken by hand',
  stdioRaw: '`toolhost serve` over stdio spoken by hand (one process: every package in the process tier)',
  stdio: '**`toolhost serve` over stdio, the official client**',
  stdioModernRaw:
    '`toolhost serve` over stdio on 2026-07-28, spoken to by hand (the envelope on every request)',
  stdioModern: '`toolhost serve` over stdio on 2026-07-28, the official 2.x client',
  httpEcho: 'a POST by hand to a bare `node:http` process answering a fixed JSON (no MCP, no checks)',
  httpRaw: '`toolhost serve --http`, a POST by hand',
  http: '**`toolhost serve --http`, the official client**',
  httpModernRaw:
    '`toolhost serve --http` on 2026-07-28, a POST by hand (the envelope and the standard headers)',
  httpModern: '**`toolhost serve --http` on 2026-07-28, the official 2.x client**',
  stdioBefore: 'the baseline build’s serve over stdio, the official client',
  httpBefore: 'the baseline build’s serve over HTTP, the official client',
  httpModernBefore: 'the baseline build’s serve over HTTP on 2026-07-28, the official 2.x client',
};

export function servePartsSection(result) {
  const base = result.roundTrip.hostCall;
  const rows = Object.entries(result.roundTrip).map(([name, stats]) => [
    PART_LABELS[name] ?? name,
    formatMs(stats.median),
    formatMs(stats.p99),
    formatRatio(stats.median / base.median),
    String(stats.n),
  ]);
  return [
    '## 20. Where a serve tools/call goes',
    '',
    `The echo tool, one call at a time, each layer added in turn, interleaved call by call; ${result.cycles} cycles. The 2025-11-25 client (SDK 1.x) unless a row names 2026-07-28.${result.baseline === null ? '' : ` Baseline build: ${result.baseline}.`}`,
    '',
    table(['Path', 'Median', 'p99', 'Median vs host.call', 'n'], rows),
    '',
  ].join('\n');
}
