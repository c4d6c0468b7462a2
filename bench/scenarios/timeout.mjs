/**
 * 4. Timeout precision. A runaway tool (`for (;;) {}`) called with `timeoutMs` T: how far past T its
 * error result arrives, and how long the next call then takes — with another thread free, and with
 * every thread of the pool stuck (so the next call needs a replacement worker).
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, importToolhost, quietLogger } from '../lib/library.mjs';
import { sleep, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const threads = availableParallelism();
const timeoutMs = 200;
const timeoutGraceMs = 100;
const rounds = iterations(10, 3);
const args = { text: 'hello' };

const host = new ToolHost({ logger: quietLogger(), timeoutGraceMs });
await host.load(fileURLToPath(benchToolsDir));

async function warmPool() {
  await Promise.all(Array.from({ length: threads * 4 }, () => host.call('echo', args)));
}

async function timedCall(name, callArgs, options) {
  const started = performance.now();
  const outcome = await host.call(name, callArgs, options);
  return { outcome, elapsed: performance.now() - started };
}

const results = { overshoot: [], nextCallOneStuck: [], nextCallAllStuck: [], overshootAllStuck: [] };
const codes = new Set();
log(`timeout: ${rounds} rounds, T = ${timeoutMs} ms, grace ${timeoutGraceMs} ms`);
for (let round = 0; round < rounds; round += 1) {
  // One runaway call while the pool's other threads are free.
  await warmPool();
  const runaway = await timedCall('runaway', {}, { timeoutMs });
  codes.add(runaway.outcome.error?.code);
  results.overshoot.push(runaway.elapsed - timeoutMs);
  results.nextCallOneStuck.push((await timedCall('echo', args)).elapsed);
  await sleep(timeoutGraceMs * 3);

  // Every thread runs away; the next call waits for a worker to be terminated and replaced.
  await warmPool();
  const all = await Promise.all(
    Array.from({ length: threads }, () => timedCall('runaway', {}, { timeoutMs })),
  );
  for (const call of all) {
    codes.add(call.outcome.error?.code);
    results.overshootAllStuck.push(call.elapsed - timeoutMs);
  }
  results.nextCallAllStuck.push((await timedCall('echo', args)).elapsed);
  await sleep(timeoutGraceMs * 3);
}
await host.close();

const stats = Object.fromEntries(Object.entries(results).map(([name, list]) => [name, summarize(list)]));
report({ threads, timeoutMs, timeoutGraceMs, rounds, errorCodes: [...codes], stats });
