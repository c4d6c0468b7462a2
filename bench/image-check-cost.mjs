/**
 * What the image checks cost per call for a 1 MB PNG result: `node bench/image-check-cost.mjs`
 * after `npm run build`. The same tool (bench/fixtures/media-tools/big-png.js) is called through
 * this build and, side by side in the same run, through a build without the checks, named by
 * TOOLHOST_BENCH_BASELINE (a folder laid out like dist/, e.g. the build of the commit before
 * them). Calls take turns in a fresh random order each cycle, so the machine's load falls on both
 * alike. The check itself is also timed on its own: it runs twice per call (in the worker, and on
 * the host when it parses the reply), and once more in the loop before a tool_result is sent.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { interleave, summarize } from './lib/stats.mjs';

const TOOL = fileURLToPath(new URL('./fixtures/media-tools/big-png.js', import.meta.url));
const CYCLES = Number(process.env.BENCH_CALLS ?? 200);
const CHECKS = Number(process.env.BENCH_CHECKS ?? 500);
const ISOLATION = process.env.BENCH_ISOLATION ?? 'worker';
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

const builds = { checked: new URL('../dist/', import.meta.url) };
if (process.env.TOOLHOST_BENCH_BASELINE !== undefined) {
  builds.unchecked = new URL(`${pathToFileURL(resolve(process.env.TOOLHOST_BENCH_BASELINE)).href}/`);
}

const dataDir = await mkdtemp(join(tmpdir(), 'toolhost-bench-images-'));
const hosts = {};
try {
  for (const [name, dist] of Object.entries(builds)) {
    const { ToolHost } = await import(new URL('src/index.js', dist).href);
    const host = new ToolHost({ dataDir, logger: quiet, isolation: ISOLATION, maxThreadsPerPool: 1 });
    const report = await host.load(TOOL);
    if (report.modules[0]?.state !== 'offered') throw new Error(`${name}: big_png was not offered`);
    hosts[name] = host;
  }
  const variants = Object.fromEntries(
    Object.entries(hosts).map(([name, host]) => [
      name,
      async () => {
        const outcome = await host.call('big_png', {});
        if (outcome.isError) throw new Error(`${name}: ${outcome.error?.message}`);
      },
    ]),
  );
  const samples = await interleave({ variants, cycles: CYCLES, warmupCycles: 20 });

  const { imageProblem } = await import(new URL('src/boundary/media.js', builds.checked).href);
  const tool = await import(pathToFileURL(TOOL).href);
  const data = tool.run().content[0].source.data;
  const checkTimes = [];
  for (let index = 0; index < CHECKS + 50; index++) {
    const started = performance.now();
    const problem = imageProblem('image/png', data);
    const elapsed = performance.now() - started;
    if (problem !== undefined) throw new Error(problem);
    if (index >= 50) checkTimes.push(elapsed);
  }

  const lines = [
    `host.call of a ${(data.length / 1024 / 1024).toFixed(2)} MB base64 PNG, ${ISOLATION} tier, Node ${process.versions.node}, ${CYCLES} calls each:`,
  ];
  for (const [name, times] of Object.entries(samples)) {
    const { median, p99 } = summarize(times);
    lines.push(`  ${name.padEnd(10)} median ${median.toFixed(2)} ms   p99 ${p99.toFixed(2)} ms`);
  }
  if (samples.unchecked !== undefined) {
    const ratio = summarize(samples.checked).median / summarize(samples.unchecked).median;
    lines.push(`  checked / unchecked (medians): ${ratio.toFixed(3)}`);
  } else {
    lines.push('  (set TOOLHOST_BENCH_BASELINE to a build without the checks for the side-by-side ratio)');
  }
  const check = summarize(checkTimes);
  lines.push(
    `imageProblem on it alone: median ${check.median.toFixed(3)} ms, p99 ${check.p99.toFixed(3)} ms (${CHECKS} checks)`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await Promise.all(Object.values(hosts).map((host) => host.close()));
  await rm(dataDir, { recursive: true, force: true });
}
