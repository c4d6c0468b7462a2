/**
 * 6. Large results: a tool returning 1 MB and 20 MB of text, through host.call and through raw
 * piscina. Each (variant, size) runs in a fresh child process, so its peak RSS (the kernel's
 * high-water mark, worker threads included) is its own; the peak is reported above the RSS measured
 * just before the first large call.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { iterations, log, quick, report } from '../lib/child.mjs';
import { benchToolsDir, importToolhost, quietLogger } from '../lib/library.mjs';
import { rawPiscina } from '../lib/raw-piscina.mjs';
import { collectGarbage, summarize } from '../lib/stats.mjs';

const MB = 1024 * 1024;
const sizes = [1 * MB, 20 * MB];
const variants = ['hostCall', 'rawPiscina'];

async function measureOne(variant, bytes) {
  const threads = availableParallelism();
  const calls = bytes > 5 * MB ? iterations(4, 2) : iterations(10, 4);
  const dataDir = await mkdtemp(join(tmpdir(), 'toolhost-bench-data-'));
  let call;
  let close;
  if (variant === 'hostCall') {
    const { ToolHost } = await importToolhost();
    const host = new ToolHost({ logger: quietLogger(), dataDir });
    await host.load(fileURLToPath(benchToolsDir));
    call = (size) => host.call('big_output', { bytes: size });
    close = () => host.close();
  } else {
    const pool = rawPiscina(threads);
    call = (size) => pool.run({ tool: 'big_output', args: { bytes: size } });
    close = () => pool.destroy();
  }
  await Promise.all(Array.from({ length: threads * 2 }, () => call(16)));
  await collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  const times = [];
  let last;
  for (let index = 0; index < calls; index += 1) {
    const started = performance.now();
    last = await call(bytes);
    times.push(performance.now() - started);
    last = summarizeResult(last);
    await collectGarbage();
  }
  const peak = process.resourceUsage().maxRSS * 1024;
  if (last.fullOutputPath !== undefined) last.fullOutputBytes = (await stat(last.fullOutputPath)).size;
  await close();
  await rm(dataDir, { recursive: true, force: true });
  return {
    variant,
    bytes,
    calls,
    time: summarize(times),
    rssBefore,
    peakBefore,
    peak,
    peakAboveBefore: peak - rssBefore,
    result: last,
  };
}

/** What came back, without the payload. */
function summarizeResult(value) {
  if (typeof value === 'string') return { textBytes: value.length };
  return {
    isError: value.isError,
    errorCode: value.error?.code,
    textBytes: value.content
      .filter((block) => block.type === 'text')
      .reduce((total, block) => total + block.text.length, 0),
    fullOutputPath: value.fullOutputPath,
  };
}

function runChild(variant, bytes) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        fileURLToPath(import.meta.url),
        `--one=${variant}:${bytes}`,
        ...(quick ? ['--quick'] : []),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`${variant} ${bytes} exited with ${code}`));
      else resolve(JSON.parse(output));
    });
  });
}

const one = process.argv.find((arg) => arg.startsWith('--one='));
if (one !== undefined) {
  const [variant, bytes] = one.slice('--one='.length).split(':');
  process.stdout.write(JSON.stringify(await measureOne(variant, Number(bytes))));
} else {
  const rounds = iterations(2, 1);
  log(
    `large results: ${rounds} rounds of ${variants.join(', ')} at ${sizes.map((size) => size / MB).join(' and ')} MB`,
  );
  const runs = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const bytes of sizes) for (const variant of variants) runs.push(await runChild(variant, bytes));
  }
  report({ sizes, runs });
}
