/**
 * 18. What a secret's swap costs (the process tier in bubblewrap): a kept-alive HTTPS request that
 * carries a secret, through the package's egress proxy, with the swap (the tool's agents leave the
 * TLS to the proxy, which speaks it upstream only; the placeholder replaced in its headers, the answer searched for the value on its way back)
 * against the same request tunnelled end to end by a package that binds no secret. Each call sends a
 * run of requests, timed in the tool's own process; the two packages' calls are interleaved. Then the
 * same as host.calls of one request each, timed around the call. Then the
 * first request to a bound host, with where its time goes: the CA and a host's certificate (made
 * once per host process, then once per host name), and a request on a new connection (no TLS
 * handshake with the proxy; the first time, one from the proxy to the real server).
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchCertificate } from '../lib/bench-certificate.mjs';
import { iterations, log, report } from '../lib/child.mjs';
import { distUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { interleave, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const { processEnvironment } = await import(new URL('src/process/sandbox/process-tier.js', distUrl).href);
const environment = await processEnvironment();
if (!environment.sandbox.available) {
  report({ skipped: `no OS sandbox here: ${environment.sandbox.reason}` });
  process.exit(0);
}
const { certificatesFor } = await import(
  new URL('src/process/network/secrets/certificate-authority.js', distUrl).href
);
const TOOLS = fileURLToPath(new URL('../fixtures/secret-tools/', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'toolhost-bench-secrets-'));

// Where the first request's time goes, before anything else made the CA in this process.
const timed = async (work) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};
const certificates = {
  authorityAndFirstHost: await timed(() => certificatesFor(['first.bench.test'])),
  anotherHost: await timed(() => certificatesFor(['second.bench.test'])),
  cached: await timed(() => certificatesFor(['first.bench.test', 'second.bench.test'])),
};

// A local HTTPS server with a certificate of the bench's own.
const { cert, key } = await benchCertificate(scratch);
const body = Buffer.alloc(1024, 'x');
const server = createServer({ key, cert }, (_request, response) => {
  response.end(body);
});
server.keepAliveTimeout = 120_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const url = `https://bench.test:${port}/`;
const net = [`bench.test:${port}`, `127.0.0.1:${port}`];

async function copy(name, secrets) {
  const folder = join(scratch, name);
  await cp(TOOLS, folder, { recursive: true });
  const permissions = secrets ? { net, secrets: { BENCH_TOKEN: [`bench.test:${port}`] } } : { net };
  const manifest = { name, type: 'module', toolhost: { tools: ['./requests.js'], permissions } };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return folder;
}

// One host per package: both tools have one name.
const hosts = {};
for (const [variant, secrets] of [
  ['swapped', true],
  ['tunnelled', false],
]) {
  hosts[variant] = new ToolHost({
    logger: quietLogger(),
    isolation: 'process',
    allowNetwork: true,
    secrets: { BENCH_TOKEN: 'bench-secret-value-0123456789' },
    maxNetworkBytesPerConnection: 4 * 1024 * 1024 * 1024,
    networkTesting: { hosts: { 'bench.test': ['127.0.0.1'] }, trustCertificates: cert },
  });
  await hosts[variant].load(await copy(`bench-secrets-${variant}-own`, secrets));
}
const call = async (variant, args) => {
  const outcome = await hosts[variant].call('bench_secret_requests', args);
  if (outcome.isError) throw new Error(`${variant}: ${JSON.stringify(outcome)}`);
  return Number(outcome.content[0].text);
};

// The first request of each: a new process, its proxy, and (swapped) the interception handshake.
const first = {
  swapped: await call('swapped', { url, count: 1 }),
  tunnelled: await call('tunnelled', { url, count: 1 }),
};

const PER_CALL = 20;
const cycles = iterations(200, 40);
log(`secrets: ${cycles} calls of ${PER_CALL} kept-alive requests per variant`);
const keptAlive = { swapped: [], tunnelled: [] };
// The host process's CPU time per request (its proxies' threads are in it; the tool's process is
// not): what the swap costs the host, which a loaded machine's waits do not blur as they do times.
const hostCpu = { swapped: [], tunnelled: [] };
await interleave({
  variants: Object.fromEntries(
    Object.keys(hosts).map((variant) => [
      variant,
      async () => {
        const before = process.cpuUsage();
        keptAlive[variant].push((await call(variant, { url, count: PER_CALL })) / PER_CALL);
        const { user, system } = process.cpuUsage(before);
        hostCpu[variant].push((user + system) / 1000 / PER_CALL);
      },
    ]),
  ),
  cycles: cycles + 10,
  warmupCycles: 0,
});
// The same, a host.call of one request each, timed around the call (what a model's call sees).
const callCycles = iterations(300, 60);
log(`secrets: ${callCycles} host.calls of one kept-alive request per variant`);
const perCall = { swapped: [], tunnelled: [] };
await interleave({
  variants: Object.fromEntries(
    Object.keys(hosts).map((variant) => [
      variant,
      async () => {
        const started = performance.now();
        await call(variant, { url, count: 1 });
        perCall[variant].push(performance.now() - started);
      },
    ]),
  ),
  cycles: callCycles + 10,
  warmupCycles: 0,
});
const freshCycles = iterations(100, 20);
log(`secrets: ${freshCycles} requests on new connections per variant`);
const fresh = { swapped: [], tunnelled: [] };
await interleave({
  variants: Object.fromEntries(
    Object.keys(hosts).map((variant) => [
      variant,
      async () => {
        fresh[variant].push(await call(variant, { url, count: 1, fresh: true }));
      },
    ]),
  ),
  cycles: freshCycles + 5,
  warmupCycles: 0,
});
for (const one of Object.values(hosts)) await one.close();
server.close();
await rm(scratch, { recursive: true, force: true });

// The first cycles warm up (a new process's code, the kept-alive connections).
const settled = (list, skip) => summarize(list.slice(skip));
const keptAliveSummary = {
  swapped: settled(keptAlive.swapped, 10),
  tunnelled: settled(keptAlive.tunnelled, 10),
};
const hostCpuSummary = { swapped: settled(hostCpu.swapped, 10), tunnelled: settled(hostCpu.tunnelled, 10) };
const freshSummary = { swapped: settled(fresh.swapped, 5), tunnelled: settled(fresh.tunnelled, 5) };
const callSummary = { swapped: settled(perCall.swapped, 10), tunnelled: settled(perCall.tunnelled, 10) };
report({
  perCall: PER_CALL,
  cycles,
  freshCycles,
  certificates,
  first,
  keptAlive: keptAliveSummary,
  fresh: freshSummary,
  keptAliveRatio: keptAliveSummary.swapped.median / keptAliveSummary.tunnelled.median,
  hostCpu: hostCpuSummary,
  callCycles,
  call: callSummary,
  callRatio: callSummary.swapped.median / callSummary.tunnelled.median,
});
