/**
 * `npm run bench`: runs every scenario in a child process of its own, then writes
 * bench/results/latest.md (the table docs/benchmarks.md quotes) and bench/results/latest.json.
 *
 *   node bench/run.js [--quick] [--only=round-trip,throughput,load,timeout,crash-storm,large-results,loop,mcp-serve,process-tier,lock-load,egress,snapshots,peer,many-packages,start-up,repeat-runs,default-tier,secrets,secrets-proxy,mcp-servers,serve-parts]
 *                     [--out=<folder>]   (default bench/results)
 *
 * TOOLHOST_BENCH_DIST=<folder laid out like dist/> measures another build (a prototype) instead;
 * give it an --out so the committed results stay those of dist/.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeMachine } from './lib/machine.mjs';
import { evaluateTargets, renderMarkdown } from './lib/render.mjs';
import { formatMs, rounded } from './lib/stats.mjs';

const SCENARIOS = [
  'round-trip',
  'throughput',
  'load',
  'timeout',
  'crash-storm',
  'large-results',
  'loop',
  'mcp-serve',
  'process-tier',
  'lock-load',
  'egress',
  'snapshots',
  'peer',
  'many-packages',
  'start-up',
  'repeat-runs',
  'default-tier',
  'secrets',
  'secrets-proxy',
  'mcp-servers',
  'serve-parts',
];

const quick = process.argv.includes('--quick');
const onlyArg = process.argv.find((arg) => arg.startsWith('--only='));
const outArg = process.argv.find((arg) => arg.startsWith('--out='));
const selected = onlyArg === undefined ? SCENARIOS : onlyArg.slice('--only='.length).split(',');
const unknown = selected.filter((name) => !SCENARIOS.includes(name));
if (unknown.length > 0) {
  process.stderr.write(`Unknown scenario ${unknown.join(', ')}; expected some of ${SCENARIOS.join(', ')}\n`);
  process.exit(2);
}
// A scenario that hangs (a host bug) is ended and reported, so the run still finishes.
const scenarioLimitMs = quick ? 180_000 : 420_000;
// Loading hundreds of packages, in three tiers, is most of what these do.
const slowScenarios = { 'many-packages': 3 };

function runScenario(name, resultFile) {
  const limitMs = scenarioLimitMs * (slowScenarios[name] ?? 1);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        fileURLToPath(new URL(`./scenarios/${name}.mjs`, import.meta.url)),
        ...(quick ? ['--quick'] : []),
      ],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, BENCH_RESULT_FILE: resultFile },
        detached: true,
      },
    );
    const limit = setTimeout(() => {
      process.kill(-child.pid, 'SIGKILL');
      resolve({ error: `did not finish within ${formatMs(limitMs)} and was ended` });
    }, limitMs);
    child.once('exit', (code, signal) => {
      clearTimeout(limit);
      if (code !== 0) {
        resolve({ error: `exited with ${signal ?? `code ${code}`}` });
        return;
      }
      try {
        resolve(JSON.parse(readFileSync(resultFile, 'utf8')));
      } catch (error) {
        resolve({ error: `left no result: ${error.message}` });
      }
    });
  });
}

const machine = { ...describeMachine(), library: process.env.TOOLHOST_BENCH_DIST || undefined };
const startedAt = new Date().toISOString();
const started = performance.now();
process.stderr.write(
  `toolhost bench (${quick ? 'quick' : 'full'}): Node ${machine.node}, ${machine.cpuModel}, ${machine.cores} cores, load ${machine.loadAverage.map((value) => value.toFixed(2)).join(' ')}\n`,
);

const scratch = mkdtempSync(join(tmpdir(), 'toolhost-bench-'));
const results = {};
for (const name of selected) {
  const scenarioStarted = performance.now();
  process.stderr.write(`${name}\n`);
  results[name] = await runScenario(name, join(scratch, `${name}.json`));
  const outcome = results[name].error === undefined ? 'done' : `FAILED: ${results[name].error}`;
  process.stderr.write(`  ${outcome} in ${formatMs(performance.now() - scenarioStarted)}\n`);
}
rmSync(scratch, { recursive: true, force: true });

const durationMs = performance.now() - started;
const targets = evaluateTargets(results);
const report = { machine, mode: quick ? 'quick' : 'full', startedAt, durationMs, targets, results };
const markdown = renderMarkdown(report);

const resultsDir =
  outArg === undefined
    ? new URL('./results/', import.meta.url)
    : pathToFileURL(`${resolve(outArg.slice('--out='.length))}/`);
mkdirSync(resultsDir, { recursive: true });
writeFileSync(new URL('latest.md', resultsDir), markdown);
writeFileSync(
  new URL('latest.json', resultsDir),
  `${JSON.stringify(rounded({ ...report, loadAverageAtEnd: describeMachine().loadAverage }), null, 2)}\n`,
);
process.stdout.write(markdown);
if (Object.values(results).some((result) => result.error !== undefined)) process.exitCode = 1;
