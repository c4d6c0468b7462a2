/** Turns the scenarios' results into the targets and the markdown report. */
import { table } from './markdown.mjs';
import { lockLoadSection } from './render-lock.mjs';
import { manyPackagesSection, manyPackagesTargets } from './render-many-packages.mjs';
import { mcpServersSection, mcpServersTargets } from './render-mcp-servers.mjs';
import { repeatRunsSection, repeatRunsTargets } from './render-repeat.mjs';
import { secretsProxySection, secretsSection, secretsTargets } from './render-secrets.mjs';
import { servePartsSection, serveTargets } from './render-serve.mjs';
import { startUpSection, startUpTargets } from './render-start-up.mjs';
import { formatBytes, formatMb, formatMs, formatRatio, plural } from './stats.mjs';

const MB = 1024 * 1024;

const calls = (value) => `${Math.round(value).toLocaleString('en-US')}/s`;
const yesNo = (met) => (met === undefined ? 'n/a' : met ? '**met**' : '**missed**');

/** Each target: what was measured against what, and whether it holds. */
export function evaluateTargets(results) {
  const targets = [];
  const roundTrip = results['round-trip'];
  if (roundTrip?.stats !== undefined) {
    const { hostCall, rawPiscina } = roundTrip.stats;
    const ratio = hostCall.median / rawPiscina.median;
    targets.push({
      id: 'round-trip',
      target: 'host.call round trip, `worker` tier, ≤ 1.5 × raw piscina (medians)',
      ratio,
      measured: `${formatRatio(ratio)} (${formatMs(hostCall.median)} vs ${formatMs(rawPiscina.median)})`,
      met: ratio <= 1.5,
    });
  }
  const throughput = results.throughput;
  if (throughput?.stats !== undefined) {
    const host = throughput.stats.hostCall.callsPerSecond.median;
    const raw = throughput.stats.rawPiscina.callsPerSecond.median;
    targets.push({
      id: 'throughput',
      target: 'parallel throughput, `worker` tier, ≥ 0.75 × raw piscina',
      ratio: host / raw,
      measured: `${formatRatio(host / raw)} (${calls(host)} vs ${calls(raw)})`,
      met: host / raw >= 0.75,
    });
    const hostCpu = throughput.stats.hostCall.cpuPerCall?.median;
    const rawCpu = throughput.stats.rawPiscina.cpuPerCall?.median;
    if (hostCpu !== undefined && rawCpu !== undefined) {
      targets.push({
        id: 'cpu-per-call',
        target:
          'CPU per call, `worker` tier, ≤ 1.4 × raw piscina (the whole process, its threads included; 64 in flight)',
        ratio: hostCpu / rawCpu,
        measured: `${formatRatio(hostCpu / rawCpu)} (${formatMs(hostCpu)} vs ${formatMs(rawCpu)})`,
        met: hostCpu / rawCpu <= 1.4,
      });
    }
  }
  const load = results.load;
  if (load?.stats !== undefined) {
    const bound = load.stats.spawnSerial.median / load.cores;
    const ratio = load.stats.load.median / bound;
    targets.push({
      id: 'load',
      target: 'loading 100 modules ≤ 1.5 × the spawn bound',
      ratio,
      measured: `${formatRatio(ratio)} (${formatMs(load.stats.load.median)} vs ${formatMs(bound)})`,
      met: ratio <= 1.5,
    });
  }
  const timeout = results.timeout;
  if (timeout?.stats !== undefined) {
    const { overshoot } = timeout.stats;
    targets.push({
      id: 'timeout',
      target: `timeout overshoot median ≤ 25 ms (T = ${timeout.timeoutMs} ms)`,
      value: overshoot.median,
      measured: `${formatMs(overshoot.median)} (max ${formatMs(overshoot.max)})`,
      met: overshoot.median <= 25,
    });
  }
  const storm = results['crash-storm'];
  if (storm?.memory !== undefined) {
    const delta = storm.memory.rssDelta;
    targets.push({
      id: 'crash-storm-rss',
      target: 'RSS after the crash storm within 20 MB of before',
      value: delta,
      measured: `${delta >= 0 ? '+' : ''}${formatMb(delta)} (${formatMb(storm.memory.before.rss)} → ${formatMb(storm.memory.after.rss)})`,
      met: Math.abs(delta) <= 20 * MB,
    });
  }
  const snapshots = results.snapshots;
  if (snapshots?.stats !== undefined) {
    const { firstBig, firstSmall, secondBig, secondSmall, strictBig, strictSmall } = snapshots.stats;
    for (const [id, big, small, bound, label] of [
      ['snapshots-first', firstBig, firstSmall, 1.3, 'first run'],
      ['snapshots-second', secondBig, secondSmall, 1.1, 'second run'],
      ['snapshots-strict', strictBig, strictSmall, 1.3, 'first run, `--isolation strict`'],
    ]) {
      if (big === undefined || small === undefined) continue;
      const ratio = big.median / small.median;
      targets.push({
        id,
        target: `\`toolhost list\` with a ${snapshots.files.toLocaleString('en-US')}-file node_modules ≤ ${bound} × without, ${label}`,
        ratio,
        measured: `${formatRatio(ratio)} (${formatMs(big.median)} vs ${formatMs(small.median)})`,
        met: ratio <= bound,
      });
    }
  }
  if (snapshots?.serve !== undefined) {
    const { big, small } = snapshots.serve;
    const ratio = big.initialized.median / small.initialized.median;
    targets.push({
      id: 'serve-initialize',
      target: `\`toolhost serve\` until \`initialize\` is answered, with the ${snapshots.files.toLocaleString('en-US')}-file node_modules ≤ 1.5 × without`,
      ratio,
      measured: `${formatRatio(ratio)} (${formatMs(big.initialized.median)} vs ${formatMs(small.initialized.median)})`,
      met: ratio <= 1.5,
    });
  }
  targets.push(...manyPackagesTargets(results['many-packages']));
  targets.push(...processTierTargets(results['process-tier']));
  targets.push(...startUpTargets(results['start-up']));
  targets.push(...repeatRunsTargets(results['repeat-runs']));
  targets.push(...secretsTargets(results.secrets));
  targets.push(...mcpServersTargets(results['mcp-servers']));
  targets.push(...serveTargets(results['mcp-serve']));
  return targets;
}

// --- The process tier's targets (issue: a process tier that starts like a worker) ---
function processTierTargets(result) {
  if (result?.startup === undefined) return [];
  const { startup, roundTrip, memory } = result;
  const first = startup.process.firstCall.median / startup.worker.firstCall.median;
  const warm = roundTrip.process.median / roundTrip.worker.median;
  const pss = memory.process.childPssPerPackage;
  return [
    {
      id: 'process-first-call',
      target: 'process tier: first call to a fresh package ≤ 2 × the worker tier (medians)',
      ratio: first,
      measured: `${formatRatio(first)} (${formatMs(startup.process.firstCall.median)} vs ${formatMs(startup.worker.firstCall.median)})`,
      met: first <= 2,
    },
    {
      id: 'process-round-trip',
      target: 'process tier: warm round trip ≤ 1.5 × the worker tier (medians)',
      ratio: warm,
      measured: `${formatRatio(warm)} (${formatMs(roundTrip.process.median)} vs ${formatMs(roundTrip.worker.median)})`,
      met: warm <= 1.5,
    },
    {
      id: 'process-idle-memory',
      target: "process tier: an idle package's process ≤ 16 MB PSS",
      value: pss,
      measured: formatMb(pss),
      met: pss <= 16 * MB,
    },
  ];
}

/** One row per measured method: median, p99, the median's ratio to the baseline (and the p99's). */
function latencyRows(allStats, names, base, { p99Ratio }) {
  return Object.entries(names)
    .filter(([key]) => allStats[key] !== undefined)
    .map(([key, label]) => {
      const stats = allStats[key];
      return [
        label,
        formatMs(stats.median),
        formatMs(stats.p99),
        formatRatio(stats.median / base.median),
        ...(p99Ratio ? [formatRatio(stats.p99 / base.p99)] : []),
        String(stats.n),
      ];
    });
}

// --- The peer: isolated-vm, in the same run ---
function peerSection(result) {
  if (result.skipped !== undefined) return `## 13. The peer: isolated-vm\n\nSkipped: ${result.skipped}.`;
  const names = {
    rawPiscina: 'raw piscina `run`',
    hostCall: '**host.call** (pooled worker)',
    isolatedVm: 'isolated-vm `apply` (async), with a timeout',
    isolatedVmSync: 'isolated-vm `applySync`, with a timeout',
  };
  const rows = latencyRows(result.stats, names, result.stats.hostCall, { p99Ratio: false });
  return [
    '## 13. The peer: isolated-vm',
    '',
    `isolated-vm ${result.isolatedVm} on Node ${result.node}: the echo in one isolate (64 MB memoryLimit) on the host's thread, arguments and result copied, a 30 s timeout per call; against host.call and raw piscina (${result.threads} threads), ${result.cycles} cycles, interleaved call by call.`,
    '',
    table(['Variant', 'Median', 'p99', 'Median vs host.call', 'n'], rows),
    '',
    result.outOfMemory === undefined
      ? ''
      : `An isolate (memoryLimit 16 MB) running \`const o = {}; for (let i = 0; ; i++) o["k" + i] = i;\` in a process standing for the host: ${result.outOfMemory.survived ? `the host lived (${result.outOfMemory.said})` : `V8 ran out of memory and the whole process ended (${result.outOfMemory.signal ?? `exit code ${result.outOfMemory.code}`})`}. The same as a tool in host.call with a 16 MB heap: ${result.outOfMemory.toolhost}, and the host lives.`,
  ].join('\n');
}
// --- end of the peer ---

/** Rows of a label, the big package's median, the small one's, their ratio and the count. */
function withAgainstWithout(pairs) {
  return pairs.map(([label, big, small]) => [
    label,
    formatMs(big.median),
    formatMs(small.median),
    formatRatio(big.median / small.median),
    String(big.n),
  ]);
}

/** `toolhost serve` of the same two packages, when the scenario measured it. */
function serveRows({ serve }) {
  if (serve === undefined) return [];
  const rows = withAgainstWithout([
    ['`initialize` answered', serve.big.initialized, serve.small.initialized],
    ['`tools/list` answered', serve.big.listed, serve.small.listed],
  ]);
  return [
    '`toolhost serve` of the same packages over stdio, from its start until each answer arrived (a fresh store each run).',
    '',
    table(['serve, until', 'with node_modules', 'without', 'ratio', 'n'], rows),
    '',
  ];
}

function snapshotsSection(result) {
  const { stats, methods } = result;
  const runs = withAgainstWithout([
    ['first run (empty store)', stats.firstBig, stats.firstSmall],
    ['second run (the store kept)', stats.secondBig, stats.secondSmall],
    ...(stats.strictBig === undefined
      ? []
      : [['first run, `--isolation strict`', stats.strictBig, stats.strictSmall]]),
  ]);
  const names = {
    copy: 'copy each file (`fs.copyFile`)',
    reflink: 'reflink each file (COPYFILE_FICLONE_FORCE)',
    storeFirst: 'the store, first time: hash and copy into it, then hard-link',
    storeAgain: 'the store again: hard-link by its record',
  };
  const baseline = methods.stats.copy.median;
  const methodRows = Object.entries(methods.stats).map(([key, summary]) => [
    names[key] ?? key,
    formatMs(summary.median),
    formatRatio(summary.median / baseline),
  ]);
  return [
    '## 12. Snapshots: a package with a big node_modules',
    '',
    `\`toolhost list\` of a one-tool package whose node_modules holds its devDependencies (${result.files.toLocaleString('en-US')} files: toolhost with its dependencies, and TypeScript), against the same package without node_modules; each run a fresh process, interleaved, ${result.rounds} rounds.`,
    '',
    table(['Run', 'with node_modules', 'without', 'ratio', 'n'], runs),
    '',
    ...serveRows(result),
    `Making a dependency tree of ${methods.files.toLocaleString('en-US')} files (${formatMb(methods.bytes)}, toolhost's own dependency closure) on this file system; reflinks: ${methods.reflinks}.`,
    '',
    table(['Method', 'median', 'vs copy'], methodRows),
  ].join('\n');
}

function roundTripSection(result) {
  const names = {
    inProcess: 'in-process function call',
    hostInProcessTool: 'host.call of a host (in-process) tool',
    rawPiscina: 'raw piscina `run`',
    hostCall: '**host.call**, `worker` tier (a pooled worker)',
    hostCall100: 'host.call, `worker` tier, tool in a 100-module package',
    hostCallProcess: 'host.call, `process` tier (the default; a package process in bubblewrap)',
    freshWorker: 'fresh Worker per call (spawn, call, exit)',
  };
  const rows = latencyRows(result.stats, names, result.stats.rawPiscina, { p99Ratio: true });
  return [
    '## 1. Round trip of a trivial tool, one call at a time',
    '',
    `The echo tool, ${result.cycles} cycles; every cycle runs each variant once in a fresh random order (the fresh Worker every ${Math.round(result.cycles / result.stats.freshWorker.n)}th cycle). Pools: ${result.threads} threads, started before measuring.`,
    '',
    table(['Variant', 'Median', 'p99', 'Median vs raw piscina', 'p99 vs raw piscina', 'n'], rows),
  ].join('\n');
}

function throughputSection(result) {
  const raw = result.stats.rawPiscina;
  const rows = [
    ['**host.call**, `worker` tier', result.stats.hostCall],
    ['raw piscina `run`', raw],
    ['host.call, `process` tier (the default)', result.stats.hostCallProcess, { ownProcess: false }],
  ]
    .filter(([, stats]) => stats !== undefined)
    .map(([label, stats, { ownProcess } = { ownProcess: true }]) => [
      label,
      calls(stats.callsPerSecond.median),
      `${calls(stats.callsPerSecond.min)} – ${calls(stats.callsPerSecond.max)}`,
      formatRatio(stats.callsPerSecond.median / raw.callsPerSecond.median),
      formatMs(stats.latency.median),
      formatMs(stats.latency.p99),
      // A package process's CPU is not this process's: the column would show the host's part only.
      ownProcess ? formatMs(stats.cpuPerCall.median) : '(not counted)',
      ownProcess ? formatRatio(stats.cpuPerCall.median / raw.cpuPerCall.median) : '',
    ]);
  const columns = ['Variant', 'Calls/s (median batch)', 'Range', 'vs raw piscina', 'Latency median'];
  columns.push('Latency p99', 'CPU per call', 'CPU vs raw');
  return [
    '## 2. Throughput of parallel trivial calls',
    '',
    `${result.batches} batches of ${result.callsPerBatch} echo calls per variant with ${result.window} in flight, batches alternating; ${result.threads} threads each.`,
    '',
    table(columns, rows),
    '',
    "CPU per call = user + system time of the whole process (host thread and workers) over a batch, divided by its calls. With every core busy it bounds the throughput, and the machine's other load moves it far less than wall time. The process tier's calls run in a package process of their own, whose CPU this process can't count.",
  ].join('\n');
}

function loadSection(result) {
  const { load, spawnSerial, spawnParallel } = result.stats;
  const bound = spawnSerial.median / result.cores;
  const row = (label, stats, cpu, divisor = 1) => [
    label,
    formatMs(stats.median / divisor),
    `${formatMs(stats.min / divisor)} – ${formatMs(stats.max / divisor)}`,
    formatRatio(load.median / (stats.median / divisor)),
    cpu === undefined ? '' : formatMs(cpu.median),
  ];
  const count = result.moduleCount;
  const lines = [
    `## 3. Loading ${count} generated tool modules`,
    '',
    `**Spawn bound** = (wall time to start and end ${count} bare workers one after another) / cores (${result.cores}). A bare worker imports nothing, posts one message and exits; the time runs from \`new Worker\` to its \`exit\` event. ${result.rounds} round${result.rounds === 1 ? '' : 's'}, alternating with the loads; one unmeasured load and spawn run first.`,
    '',
    table(
      ['Measure', 'Median', 'Range', 'host.load vs this', 'CPU (all threads)'],
      [
        row(`host.load of a ${count}-module package (fresh host each time)`, load, result.cpu.load),
        row(`spawn bound (${count} serial spawns / ${result.cores})`, spawnSerial, undefined, result.cores),
        row(
          `${count} bare spawns, ${result.cores} at a time (measured)`,
          spawnParallel,
          result.cpu.spawnParallel,
        ),
        row(`${count} bare spawns, one at a time`, spawnSerial, result.cpu.spawnSerial),
      ],
    ),
  ];
  if (result.leftOut.length > 0) {
    const reasons = result.leftOut.map((item) => `${item.code} (${item.reason})`).join('; ');
    lines.push('', `Left out during the measured loads: ${reasons}`);
  }
  const spawnCpu = result.cpu.spawnSerial.median;
  lines.push(
    '',
    `One bare spawn takes ${formatMs(spawnSerial.median / count)} of wall time and ${formatMs(spawnCpu / count)} of CPU; one module read in host.load costs ${formatMs(result.cpu.load.median / count)} of CPU (${formatRatio(result.cpu.load.median / spawnCpu)} a bare spawn). The spawn bound (${formatMs(bound)}) assumes ${result.cores} idle cores; the measured ${result.cores}-at-a-time run shows what the machine gave.`,
  );
  return lines.join('\n');
}

function timeoutSection(result) {
  const row = (label, stats) => [label, formatMs(stats.median), formatMs(stats.max), String(stats.n)];
  return [
    '## 4. Timeout precision',
    '',
    `A runaway tool (\`for (;;) {}\`) called with \`timeoutMs\` ${result.timeoutMs}, \`timeoutGraceMs\` ${result.timeoutGraceMs}; ${plural(result.rounds, 'round')}. Overshoot = time from \`host.call\` to its error result, minus T. "Next call" = an echo call made as soon as the timeout result arrives. Error codes seen: ${result.errorCodes.join(', ')}.`,
    '',
    table(
      ['Measure', 'Median', 'Max', 'n'],
      [
        row('overshoot past T, one runaway call (other threads free)', result.stats.overshoot),
        row('next call, one thread stuck', result.stats.nextCallOneStuck),
        row(
          `overshoot past T, all ${result.threads} threads run away at once`,
          result.stats.overshootAllStuck,
        ),
        row('next call, all threads stuck (needs a replacement worker)', result.stats.nextCallAllStuck),
      ],
    ),
  ].join('\n');
}

function crashStormSection(result) {
  const row = (label, run) => [
    label,
    String(run.goodCalls),
    formatMs(run.wallMs),
    calls(run.goodCallsPerSecond),
    formatMs(run.goodLatency.median),
    formatMs(run.goodLatency.p99),
    Object.entries(run.codes)
      .map(([code, count]) => `${code} ${count}`)
      .join(', '),
  ];
  const baselineRate = (result.baseline.goodCallsPerSecond + result.baselineAfter.goodCallsPerSecond) / 2;
  const { before, after } = result.memory;
  return [
    '## 5. Crash storm',
    '',
    `${result.totalCalls} calls with ${result.window} in flight; in the storm every ${result.crashEvery}th call runs a tool that calls \`process.exit\`, in the crash-free runs those calls are skipped. Crash-free runs come before and after the storm.`,
    '',
    table(
      ['Run', 'Good calls', 'Wall', 'Good calls/s', 'Good p50', 'Good p99', 'Outcomes'],
      [
        row('crash-free (before)', result.baseline),
        row('**storm**', result.storm),
        row('crash-free (after)', result.baselineAfter),
      ],
    ),
    '',
    `Good calls' throughput in the storm: ${formatRatio(result.storm.goodCallsPerSecond / baselineRate)} of the crash-free mean; p99 ${formatRatio(result.storm.goodLatency.p99 / result.baseline.goodLatency.p99)} of the first crash-free run's.`,
    '',
    `Leak check: host RSS right before and right after the storm, each time once the pool's workers had exited idle (\`idleTimeoutMs\` ${result.idleTimeoutMs}) and after a full GC: ${formatMb(before.rss)} → ${formatMb(after.rss)} (${result.memory.rssDelta >= 0 ? '+' : ''}${formatMb(result.memory.rssDelta)}); host heap used ${formatMb(before.heapUsed)} → ${formatMb(after.heapUsed)}. RSS while the calls ran, every 1000 calls: storm ${result.storm.rssSamples.map((bytes) => (bytes / MB).toFixed(0)).join(', ')} MB; crash-free ${result.baseline.rssSamples.map((bytes) => (bytes / MB).toFixed(0)).join(', ')} MB.`,
  ].join('\n');
}

function largeResultsSection(result) {
  const groups = new Map();
  for (const run of result.runs) {
    const key = `${run.variant}:${run.bytes}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)];
  };
  const rows = [];
  for (const bytes of result.sizes) {
    const raw = groups.get(`rawPiscina:${bytes}`) ?? [];
    const rawTime = median(raw.map((run) => run.time.median));
    for (const variant of ['hostCall', 'rawPiscina']) {
      const runs = groups.get(`${variant}:${bytes}`) ?? [];
      if (runs.length === 0) continue;
      const time = median(runs.map((run) => run.time.median));
      const peak = Math.max(...runs.map((run) => run.peakAboveBefore));
      const last = runs.at(-1).result;
      const what =
        variant === 'hostCall'
          ? `model sees ${formatBytes(last.textBytes)}${last.fullOutputBytes === undefined ? '' : `; full output file ${formatBytes(last.fullOutputBytes)}`}${last.isError ? `; error ${last.errorCode}` : ''}`
          : `${formatBytes(last.textBytes)} string`;
      rows.push([
        variant === 'hostCall' ? '**host.call**' : 'raw piscina `run`',
        `${bytes / MB} MB`,
        formatMs(time),
        formatRatio(time / rawTime),
        formatMb(peak),
        what,
        `${runs.reduce((total, run) => total + run.calls, 0)} in ${plural(runs.length, 'process')}`,
      ]);
    }
  }
  return [
    '## 6. Large results',
    '',
    "A tool returning N bytes of ASCII text, default host options (`outputBudgetBytes` 32 KB, `maxResultBytes` 10 MB). Each variant and size runs in a fresh process; peak = the kernel's RSS high-water mark (worker threads included) above the RSS just before the first large call. Time is the median call; peak is the largest over the rounds.",
    '',
    table(
      ['Variant', 'Output', 'Time (median)', 'vs raw piscina', 'Peak RSS above before', 'Result', 'Calls'],
      rows,
    ),
  ].join('\n');
}

function loopSection(result) {
  if (result.skipped !== undefined)
    return `## 7. The loop's per-turn overhead\n\nSkipped: ${result.skipped}.`;
  const pairs = [
    ['host tool (sandboxed, host.call)', result.stats.plainHostTool, result.stats.runToolsHostTool],
    ['in-process tool', result.stats.plainInProcessTool, result.stats.runToolsInProcessTool],
  ];
  const rows = pairs.map(([label, plain, loop]) => [
    label,
    formatMs(plain.median),
    formatMs(loop.median),
    formatRatio(loop.median / plain.median),
    formatMs((loop.median - plain.median) / result.requestsPerConversation),
    `${formatMs(plain.p99)} / ${formatMs(loop.p99)}`,
  ]);
  return [
    "## 7. The loop's per-turn overhead",
    '',
    `A conversation = ${result.requestsPerConversation} requests (\`tool_use\`, then \`end_turn\`) to a local fake Messages API (node:http, JSON) through the real \`@anthropic-ai/sdk\` client; ${result.cycles} conversations per variant, interleaved. The plain loop is the smallest correct \`client.messages.create\` loop running the same tool the same way.`,
    '',
    table(
      [
        'Tool',
        'Plain loop (median)',
        'runTools (median)',
        'runTools vs plain',
        'Overhead per request',
        'p99 plain / runTools',
      ],
      rows,
    ),
  ].join('\n');
}

function mcpServeSection(result) {
  const base = result.roundTrip.hostCall;
  const labels = {
    hostCall: 'host.call in the same process',
    stdio: '`tools/call` over stdio (one process: the process tier), 2025-11-25',
    http: '`tools/call` over Streamable HTTP (stateless), 2025-11-25',
    stdioModern: '`tools/call` over stdio, 2026-07-28',
    httpModern: '`tools/call` over Streamable HTTP, 2026-07-28',
  };
  const rows = Object.entries(labels).flatMap(([name, label]) => {
    const stats = result.roundTrip[name];
    if (stats === undefined) return [];
    return [
      [
        name === 'hostCall' ? label : `**${label}**`,
        formatMs(stats.median),
        formatMs(stats.p99),
        formatRatio(stats.median / base.median),
        formatRatio(stats.p99 / base.p99),
        String(stats.n),
      ],
    ];
  });
  const one = result.throughput.oneInstance.callsPerSecond;
  const throughputRows = [
    ['one instance', result.throughput.oneInstance],
    ['two instances, round-robin', result.throughput.twoInstances],
  ].map(([label, stats]) => [
    label,
    `${Math.round(stats.callsPerSecond.median).toLocaleString('en-US')}/s`,
    `${Math.round(stats.callsPerSecond.min).toLocaleString('en-US')}/s – ${Math.round(stats.callsPerSecond.max).toLocaleString('en-US')}/s`,
    formatRatio(stats.callsPerSecond.median / one.median),
    formatMs(stats.latency.median),
    formatMs(stats.latency.p99),
  ]);
  return [
    '## 8. toolhost serve (MCP)',
    '',
    `A trivial tool (\`echo\`) through the official MCP clients (\`@modelcontextprotocol/sdk\` 1.x for 2025-11-25, \`@modelcontextprotocol/client\` 2.x pinned to 2026-07-28) against \`toolhost serve\` started as a child process, one call at a time, interleaved with \`host.call\` of the same tool in the benchmark's own process; ${result.cycles} cycles.`,
    '',
    table(['Path', 'Median', 'p99', 'Median vs host.call', 'p99 vs host.call', 'n'], rows),
    '',
    `Many calls in flight (${result.window}) over HTTP, through one instance and through two behind a client that sends each request to the next instance in turn; ${result.batches} batches of ${result.callsPerBatch} calls each, alternating. Both instances share this machine's cores with each other and with the client.`,
    '',
    table(
      [
        'Behind the client',
        'Calls/s (median batch)',
        'Range',
        'vs one instance',
        'Latency median',
        'Latency p99',
      ],
      throughputRows,
    ),
  ].join('\n');
}

function processTierSection(result) {
  const { startup, memory, roundTrip } = result;
  const ratio = (key, stat = 'median') => formatRatio(key.process[stat] / key.worker[stat]);
  const spawnRows = [
    ['first call to a fresh package', startup.worker.firstCall, startup.process.firstCall],
    ['loading it (declarations read)', startup.worker.load, startup.process.load],
    ['host.call round trip, warm', roundTrip.worker, roundTrip.process],
  ].map(([label, worker, process]) => [
    label,
    `${formatMs(worker.median)} (p99 ${formatMs(worker.p99)})`,
    `${formatMs(process.median)} (p99 ${formatMs(process.p99)})`,
    ratio({ worker, process }),
    String(process.n),
  ]);
  const memoryRows = ['worker', 'process'].map((tier) => [
    `\`${tier}\``,
    formatMb(memory[tier].hostRssPerPackage),
    formatMb(memory[tier].childRssPerPackage),
    formatMb(memory[tier].childPssPerPackage),
  ]);
  return [
    '## 9. The process tier against the worker tier',
    '',
    `Sandbox: ${result.sandbox}; memory limit: ${result.memoryLimit}. First calls: ${result.firstCalls} fresh packages per tier, tiers in turns; round trip: ${result.cycles} cycles, interleaved call by call.`,
    '',
    table(['Measure', '`worker` median', '`process` median', 'process vs worker', 'n'], spawnRows),
    '',
    `Memory an idle package holds after one call (${memory.process.packages} packages per tier, each its own pool; the host's RSS after a full GC, and what its child processes hold: RSS counts shared pages in each process, PSS shares them out):`,
    '',
    table(['Tier', 'Host RSS per package', 'Child RSS per package', 'Child PSS per package'], memoryRows),
    ...spareLines(memory.process),
  ].join('\n');
}

/** The process tier's ready spare, one per host: apart from the packages' figures (older results have none). */
function spareLines(memory) {
  if (memory.sparePss === undefined) return [];
  return [
    '',
    `Not in the rows above: the host's ready spare process (one per host, whatever its packages), ${formatMb(memory.sparePss)} PSS (${formatMb(memory.spareRss)} RSS).`,
  ];
}

function slowUploadLines(upload) {
  const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  const line = (label, one) => [label, formatMs(one.ms), mib(one.rssGrowth), mib(one.arrayBuffersGrowth)];
  return [
    `The host's memory while a tool uploads ${mib(upload.bytes)} as fast as it can to a server that reads about 25 MiB/s (peak growth over the call, sampled every 5 ms; through the proxy, the bytes pass through a thread of the host; with the whole network they never enter it):`,
    '',
    table(
      ['upload', 'time', 'host RSS growth', 'host ArrayBuffer growth'],
      [line('process, proxy', upload.proxy), line('process, whole network', upload.wholeNetwork)],
    ),
    '',
  ];
}

function egressSection(result) {
  if (result.skipped !== undefined) return `## 11. Per-host egress\n\nSkipped: ${result.skipped}.`;
  const { fetch, newConnection, flood } = result;
  const row = (label, samples) => [
    label,
    `${formatMs(samples.worker.median)} (p99 ${formatMs(samples.worker.p99)})`,
    `${formatMs(samples.wholeNetwork.median)} (p99 ${formatMs(samples.wholeNetwork.p99)})`,
    `${formatMs(samples.proxy.median)} (p99 ${formatMs(samples.proxy.p99)})`,
    formatRatio(samples.proxy.median / samples.worker.median),
    formatRatio(samples.proxy.median / samples.wholeNetwork.median),
  ];
  const floods = flood.floods.map((one) => `${formatMs(one.ms)} (${JSON.stringify(one.outcome)})`).join('; ');
  return [
    '## 11. Per-host egress: the proxy against no proxy',
    '',
    `A 1 KiB local resource; ${result.fetchCycles} fetches and ${result.connectCycles} new connections per variant, interleaved call by call. \`worker\`: the worker tier (no sandbox, no proxy); whole network: the process tier in bubblewrap granted \`"net": true\` (the host's network, no proxy); proxy: held to its hosts, through its egress proxy.`,
    '',
    table(
      [
        'host.call of',
        '`worker`',
        'process, whole network',
        'process, proxy',
        'proxy vs worker',
        'proxy vs whole network',
      ],
      [
        row('`fetch` (connection reused)', fetch),
        row('`http.get` on a new connection', newConnection),
        ...(result.download === undefined
          ? []
          : [
              row(
                `\`fetch\` of ${result.downloadBytes / 1024 / 1024} MiB (${result.downloadCycles} each)`,
                result.download,
              ),
            ]),
      ],
    ),
    '',
    ...(result.slowUpload === undefined ? [] : slowUploadLines(result.slowUpload)),
    `Another package's \`echo\` round trip while one tool opens ${flood.count} connections through its proxy (500 at a time; floods: ${floods}; ${flood.refusedEvents} refusals reported as events):`,
    '',
    table(
      ['', 'median', 'p99', 'n'],
      [
        ['quiet', formatMs(flood.quiet.median), formatMs(flood.quiet.p99), String(flood.quiet.n)],
        [
          'during the flood',
          formatMs(flood.flooded.median),
          formatMs(flood.flooded.p99),
          String(flood.flooded.n),
        ],
        [
          'flooded vs quiet',
          formatRatio(flood.flooded.median / flood.quiet.median),
          formatRatio(flood.flooded.p99 / flood.quiet.p99),
          '',
        ],
      ],
    ),
  ].join('\n');
}

function defaultTierSection(result) {
  const { strongest, firstCall, memory, ratios } = result;
  const where = strongest.sandboxed ? 'in bubblewrap' : "without a sandbox (Node's permission model)";
  return [
    '## 17. What the default tier costs',
    '',
    `A host that names no tier runs \`${strongest.tier}\` here, ${where}; against one that names \`worker\`, in one run. Finding the strongest tier (a trial sandbox) takes ${formatMs(result.probeMs)}, once per process. First call: a fresh host and package to its first answer, ${result.rounds} rounds, variants in turns. Memory: ${memory.default.packages} active packages per variant (each loaded and called, its worker or process up); the host's RSS after a full GC, plus its package processes' PSS (the host's ready spare apart).`,
    '',
    table(
      ['Measure', '`worker`', 'default', 'default vs worker'],
      [
        [
          'first call of a fresh host (median)',
          `${formatMs(firstCall.worker.median)} (p99 ${formatMs(firstCall.worker.p99)})`,
          `${formatMs(firstCall.default.median)} (p99 ${formatMs(firstCall.default.p99)})`,
          formatRatio(ratios.firstCall),
        ],
        [
          'memory per active package',
          formatMb(memory.worker.totalPerPackage),
          `${formatMb(memory.default.totalPerPackage)} (host ${formatMb(memory.default.hostRssPerPackage)} + process PSS ${formatMb(memory.default.childPssPerPackage)})`,
          formatRatio(ratios.memoryPerActivePackage),
        ],
      ],
    ),
  ].join('\n');
}

const sections = {
  'round-trip': roundTripSection,
  throughput: throughputSection,
  load: loadSection,
  timeout: timeoutSection,
  'crash-storm': crashStormSection,
  'large-results': largeResultsSection,
  loop: loopSection,
  'mcp-serve': mcpServeSection,
  'process-tier': processTierSection,
  'lock-load': lockLoadSection,
  egress: egressSection,
  snapshots: snapshotsSection,
  peer: peerSection,
  'many-packages': manyPackagesSection,
  'start-up': startUpSection,
  'repeat-runs': repeatRunsSection,
  'default-tier': defaultTierSection,
  secrets: secretsSection,
  'secrets-proxy': secretsProxySection,
  'mcp-servers': mcpServersSection,
  'serve-parts': servePartsSection,
};

export function renderMarkdown({ machine, mode, startedAt, durationMs, results, targets }) {
  const load = machine.loadAverage.map((value) => value.toFixed(2)).join(', ');
  const lines = [
    '# toolhost benchmarks',
    '',
    `Measured ${startedAt} with \`npm run bench${mode === 'quick' ? ' -- --quick' : ''}\` (${mode} run, ${formatMs(durationMs)} in all).`,
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${formatMb(machine.memoryBytes)} memory; ${machine.os}; Node ${machine.node} (V8 ${machine.v8}); piscina ${machine.piscina}; load average at start ${load}.`,
    machine.library === undefined
      ? `Code: commit ${machine.commit ?? 'unknown'}${machine.uncommittedSourceChanges ? ' with uncommitted changes in src/ or workers/' : ''}, built to dist/.`
      : `Code: the build in ${machine.library} (TOOLHOST_BENCH_DIST), not dist/.`,
    'The machine is shared and noisy: compare the ratios (each measured against a baseline in the same run, interleaved), not the absolute times.',
    '',
    '## Targets',
    '',
    table(
      ['Target', 'Measured', ''],
      targets.map((target) => [target.target, target.measured, yesNo(target.met)]),
    ),
  ];
  for (const [name, render] of Object.entries(sections)) {
    const result = results[name];
    if (result === undefined) continue;
    lines.push('');
    lines.push(result.error === undefined ? render(result) : `## ${name}\n\nFailed: ${result.error}`);
  }
  return `${lines.join('\n')}\n`;
}
