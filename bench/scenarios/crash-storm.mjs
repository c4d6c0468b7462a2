/**
 * 5. A crash storm: N calls with every tenth calling process.exit, a fixed number in flight, against
 * runs of the same good calls with no crashes. The leak check compares the host's RSS before and after
 * the storm in the same state: every pool worker gone (idle workers exit after `idleTimeoutMs`) and
 * the host's heap collected. With workers running, RSS follows their heaps, which grow for the first
 * ~10 000 calls of a fresh worker whether or not anything crashed.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, importToolhost, quietLogger } from '../lib/library.mjs';
import { collectGarbage, runWindow, sleep, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const threads = availableParallelism();
const totalCalls = iterations(10_000, 2000);
const crashEvery = 10;
const window = 16;
const args = { text: 'hello' };

const idleTimeoutMs = 1000;
const host = new ToolHost({ logger: quietLogger(), idleTimeoutMs });
await host.load(fileURLToPath(benchToolsDir));

/** RSS once the pool's workers have exited idle and the heap is collected, read until it holds still. */
async function settledRss() {
  await sleep(idleTimeoutMs * 2);
  let previous = 0;
  let usage = process.memoryUsage();
  for (let reading = 0; reading < 10 && Math.abs(usage.rss - previous) > 512 * 1024; reading += 1) {
    previous = usage.rss;
    await collectGarbage();
    await sleep(300);
    usage = process.memoryUsage();
  }
  return usage;
}

async function run(total, withCrashes) {
  const goodLatencies = [];
  const codes = {};
  let goodCalls = 0;
  const rssSamples = [];
  const started = performance.now();
  await runWindow({
    total,
    window,
    makeCall: async (index) => {
      const crash = index % crashEvery === crashEvery - 1;
      if (crash && !withCrashes) return;
      const callStarted = performance.now();
      const outcome = await host.call(crash ? 'exit' : 'echo', crash ? {} : args);
      const code = outcome.error?.code ?? 'ok';
      codes[code] = (codes[code] ?? 0) + 1;
      if (!crash) {
        goodCalls += 1;
        goodLatencies.push(performance.now() - callStarted);
      }
      if (index % 1000 === 0) rssSamples.push(process.memoryUsage().rss);
    },
  });
  const wallMs = performance.now() - started;
  return {
    wallMs,
    goodCalls,
    goodCallsPerSecond: (goodCalls / wallMs) * 1000,
    goodLatency: summarize(goodLatencies),
    codes,
    rssSamples,
  };
}

// Unmeasured warm-up, crashes included, so one-time costs land before the first RSS reading.
await run(300, true);
await run(300, false);
log(`crash storm: ${totalCalls} calls, every ${crashEvery}th exits, ${window} in flight`);
// Crash-free runs on both sides of the storm: the machine's drift shows as a gap between them.
const baseline = await run(totalCalls, false);
const before = await settledRss();
const storm = await run(totalCalls, true);
const after = await settledRss();
const baselineAfter = await run(totalCalls, false);
await host.close();

report({
  threads,
  totalCalls,
  crashEvery,
  window,
  idleTimeoutMs,
  baseline,
  storm,
  baselineAfter,
  memory: {
    before,
    after,
    rssDelta: after.rss - before.rss,
    heapUsedDelta: after.heapUsed - before.heapUsed,
  },
});
