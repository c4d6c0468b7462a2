/**
 * 11. What per-host egress costs (the process tier in bubblewrap, a package held to a list of
 * hosts): a `fetch` of a small local resource through the package's egress proxy, against the same
 * fetch from the worker tier (no sandbox, no proxy) and from the process tier granted the whole
 * network (sandbox, no proxy), interleaved call by call; the same for a request on a connection of
 * its own (what setting up a tunnel costs); a download of 8 MiB (what the proxy's relaying and byte
 * counting cost per byte); the host's memory while a tool uploads fast to a server that reads
 * slowly (the proxy's backpressure), against the same upload with no proxy in the host; and another
 * package's `host.call` round trip while one tool opens 10 000 connections through its proxy,
 * against the same round trip without.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, distUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { interleave, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const { processEnvironment } = await import(new URL('src/process/sandbox/process-tier.js', distUrl).href);
const environment = await processEnvironment();
if (!environment.sandbox.available) {
  report({ skipped: `no OS sandbox here: ${environment.sandbox.reason}` });
  process.exit(0);
}
const TOOLS = fileURLToPath(new URL('../fixtures/egress-tools/', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'toolhost-bench-egress-'));
const body = Buffer.alloc(1024, 'x');
const BIG = 8 * 1024 * 1024;
const big = Buffer.alloc(BIG, 'x');
const server = createServer((request, response) => {
  if (request.url === '/big') response.end(big);
  else if (request.url === '/slow-upload') readSlowly(request, response);
  else response.end(body);
});
/** Reads an upload at about 25 MiB/s (256 KiB every 10 ms), so a fast writer backs up behind it. */
function readSlowly(request, response) {
  let received = 0;
  let budget = 0;
  const tick = setInterval(() => {
    budget = 256 * 1024;
    request.resume();
  }, 10);
  request.on('data', (chunk) => {
    received += chunk.length;
    budget -= chunk.length;
    if (budget <= 0) request.pause();
  });
  request.once('end', () => {
    clearInterval(tick);
    response.end(`received ${received}`);
  });
  request.once('close', () => clearInterval(tick));
}
// Longer than any pause between calls: a connection the server closes just as a call reuses it
// would fail that call (Node's default is 5 s, which a loaded machine's pauses can reach).
server.keepAliveTimeout = 120_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const testHosts = { 'bench.test': ['127.0.0.1'] };

async function copy(name, net) {
  const folder = join(scratch, name);
  await cp(TOOLS, folder, { recursive: true });
  const manifest = {
    name,
    type: 'module',
    toolhost: {
      tools: ['./fetch.js', './get-new-connection.js', './flood.js', './upload.js'],
      permissions: { net },
    },
  };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return folder;
}

const variants = {
  worker: { isolation: 'worker', net: true, url: `http://127.0.0.1:${port}/` },
  wholeNetwork: { isolation: 'process', net: true, url: `http://127.0.0.1:${port}/` },
  proxy: {
    isolation: 'process',
    net: [`bench.test:${port}`, `127.0.0.1:${port}`],
    url: `http://bench.test:${port}/`,
  },
};
const hosts = {};
for (const [name, variant] of Object.entries(variants)) {
  hosts[name] = new ToolHost({
    logger: quietLogger(),
    isolation: variant.isolation,
    allowNetwork: true,
    // One kept-alive connection carries every call's fetch, the 8 MiB downloads included: more than
    // the default 256 MiB a connection may carry, after which the proxy closes it (by design).
    maxNetworkBytesPerConnection: 4 * 1024 * 1024 * 1024,
    networkTesting: { hosts: testHosts },
  });
  await hosts[name].load(await copy(`bench-egress-${name}`, variant.net));
  const outcome = await hosts[name].call('bench_fetch', { url: variant.url });
  if (outcome.isError) throw new Error(`${name}: ${JSON.stringify(outcome)}`);
}
const callOf = (tool, path = '') =>
  Object.fromEntries(
    Object.entries(variants).map(([name, variant]) => [
      name,
      async () => {
        const outcome = await hosts[name].call(tool, { url: `${variant.url}${path}` });
        if (outcome.isError) throw new Error(`${name} ${tool}: ${JSON.stringify(outcome)}`);
      },
    ]),
  );

const fetchCycles = iterations(1000, 150);
log(`egress: ${fetchCycles} fetches per variant`);
const fetches = await interleave({ variants: callOf('bench_fetch'), cycles: fetchCycles, warmupCycles: 50 });
const connectCycles = iterations(500, 100);
log(`egress: ${connectCycles} new connections per variant`);
const connects = await interleave({
  variants: callOf('bench_get_new_connection'),
  cycles: connectCycles,
  warmupCycles: 30,
});
const downloadCycles = iterations(40, 8);
log(`egress: ${downloadCycles} downloads of ${BIG} bytes per variant`);
const downloads = await interleave({
  variants: callOf('bench_fetch', 'big'),
  cycles: downloadCycles,
  warmupCycles: 3,
});

// The host's memory while a tool uploads fast to a server that reads slowly: through the proxy (a
// thread of the host) against the whole network (no proxy in the host), one after the other.
const UPLOAD = iterations(64, 16) * 1024 * 1024;
async function uploadMemory(name) {
  const before = process.memoryUsage();
  const peak = { rss: before.rss, arrayBuffers: before.arrayBuffers };
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers);
  }, 5);
  const started = performance.now();
  const outcome = await hosts[name].call(
    'bench_upload',
    { url: `${variants[name].url}slow-upload`, size: UPLOAD },
    { timeoutMs: 600_000 },
  );
  clearInterval(sampler);
  if (outcome.isError) throw new Error(`${name} upload: ${JSON.stringify(outcome)}`);
  return {
    ms: performance.now() - started,
    rssGrowth: peak.rss - before.rss,
    arrayBuffersGrowth: peak.arrayBuffers - before.arrayBuffers,
  };
}
log(`egress: uploads of ${UPLOAD} bytes to a slow server`);
const slowUpload = {
  bytes: UPLOAD,
  proxy: await uploadMemory('proxy'),
  wholeNetwork: await uploadMemory('wholeNetwork'),
};
for (const host of Object.values(hosts)) await host.close();

// Another package's calls while one tool floods its proxy: quiet and flooded phases in turns.
const floodHost = new ToolHost({
  logger: quietLogger(),
  isolation: 'process',
  allowNetwork: true,
  networkTesting: { hosts: testHosts },
});
await floodHost.load(await copy('bench-egress-flood', variants.proxy.net));
await floodHost.load(fileURLToPath(benchToolsDir));
const echo = async () => {
  const outcome = await floodHost.call('echo', { text: 'hello' });
  if (outcome.isError) throw new Error(`echo: ${JSON.stringify(outcome)}`);
};
for (let index = 0; index < 50; index += 1) await echo();
const floodCount = iterations(10_000, 2_000);
const rounds = iterations(2, 1);
const quiet = [];
const flooded = [];
const floods = [];
let refusedEvents = 0;
floodHost.on('network', (event) => {
  if (!event.allowed) refusedEvents += 1;
});
for (let round = 0; round < rounds; round += 1) {
  for (let index = 0; index < iterations(400, 100); index += 1) {
    const started = performance.now();
    await echo();
    quiet.push(performance.now() - started);
  }
  log(`egress: a tool opens ${floodCount} connections (round ${round + 1} of ${rounds})`);
  let done = false;
  const started = performance.now();
  const flood = floodHost
    .call('bench_flood', { url: variants.proxy.url, count: floodCount, wave: 500 }, { timeoutMs: 600_000 })
    .finally(() => {
      done = true;
    });
  while (!done) {
    const callStarted = performance.now();
    await echo();
    flooded.push(performance.now() - callStarted);
  }
  const outcome = await flood;
  floods.push({
    ms: performance.now() - started,
    outcome: outcome.isError ? outcome.error : JSON.parse(outcome.content[0].text),
  });
}
await floodHost.close();
server.close();
await rm(scratch, { recursive: true, force: true });

const summarizeAll = (record) =>
  Object.fromEntries(Object.entries(record).map(([key, list]) => [key, summarize(list)]));
report({
  fetchCycles,
  connectCycles,
  downloadCycles,
  downloadBytes: BIG,
  fetch: summarizeAll(fetches),
  newConnection: summarizeAll(connects),
  download: summarizeAll(downloads),
  slowUpload,
  flood: { count: floodCount, floods, refusedEvents, quiet: summarize(quiet), flooded: summarize(flooded) },
});
