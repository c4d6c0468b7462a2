/** Section 18 of the report: an MCP server wrapped by toolhost against the same server run directly. */
import { table } from './markdown.mjs';
import { formatMb, formatMs, formatRatio } from './stats.mjs';

/** The targets: a call ≤ 1.3×, start until tools/list ≤ 1.5× direct, idle overhead ≤ 10 MB. */
export function mcpServersTargets(result) {
  if (result?.roundTrip === undefined) return [];
  const call = result.roundTrip.hostCall.median / result.roundTrip.direct.median;
  const start = result.start.hostLoad.median / result.start.direct.median;
  const overhead = result.idleMemory.sandboxRss + Math.max(0, result.idleMemory.hostHeapGrowth);
  return [
    {
      id: 'mcp-servers-call',
      target: 'a wrapped MCP server: tools/call (host.call) ≤ 1.3 × the server run directly (medians)',
      ratio: call,
      measured: `${formatRatio(call)} (${formatMs(result.roundTrip.hostCall.median)} vs ${formatMs(result.roundTrip.direct.median)})`,
      met: call <= 1.3,
    },
    {
      id: 'mcp-servers-start',
      target: 'a wrapped MCP server: start until tools/list (host.load) ≤ 1.5 × direct (medians)',
      ratio: start,
      measured: `${formatRatio(start)} (${formatMs(result.start.hostLoad.median)} vs ${formatMs(result.start.direct.median)})`,
      met: start <= 1.5,
    },
    {
      id: 'mcp-servers-idle',
      target: "an idle wrapped MCP server's memory beyond the server's own ≤ 10 MB",
      ratio: overhead / (10 * 1024 * 1024),
      measured: formatMb(overhead),
      met: overhead <= 10 * 1024 * 1024,
    },
  ];
}

export function mcpServersSection(result) {
  const labels = {
    direct: 'the server run directly by the official client',
    hostCall: '**host.call, the server from servers.json (process tier, bubblewrap)**',
    serve: '**the official client → `toolhost serve servers.json` → the server**',
    hostLoad: '**host.load(servers.json), the server in bubblewrap**',
  };
  const rows = (samples) =>
    Object.entries(samples).map(([name, stats]) => [
      labels[name] ?? name,
      formatMs(stats.median),
      formatMs(stats.p99),
      formatRatio(stats.median / samples.direct.median),
      String(stats.n),
    ]);
  const { serverRss, sandboxRss, hostHeapGrowth } = result.idleMemory;
  return [
    '## 19. MCP servers: wrapped against direct',
    '',
    `\`@modelcontextprotocol/server-everything\` (its \`echo\` tool), run directly by the official client (\`@modelcontextprotocol/client\`) and wrapped by toolhost, interleaved; ${result.cycles} calls and ${result.starts} starts each. \`serve\` adds two hops (the relay and the hosting process) to the client's own.`,
    '',
    table(['A trivial tools/call', 'Median', 'p99', 'Median vs direct', 'n'], rows(result.roundTrip)),
    '',
    table(
      ['Start until tools/list is answered (then end)', 'Median', 'p99', 'Median vs direct', 'n'],
      rows(result.start),
    ),
    '',
    `Idle, beside the server's own ${formatMb(serverRss)} RSS: its sandbox's processes (bubblewrap) ${formatMb(sandboxRss)} RSS, and the host's heap grew by ${formatMb(hostHeapGrowth)} for it.`,
    '',
  ].join('\n');
}
