/**
 * 18b. The secrets proxy alone, and where its time goes: the same kept-alive HTTPS request through
 * an egress proxy that swaps a secret in (the agents leave the TLS to it: plain HTTP on its socket,
 * the request parsed and sent on over its one TLS, the answer searched for the value) against one that tunnels it (a proxy with no secrets: bytes spliced), with
 * no sandbox, no package process and no host.call around it. The proxies run in this thread; the
 * client (Node's https through the agents toolhost installs in a package's process) and the upstream
 * server each in a worker thread of their own, as they are a process and a server in real use.
 *
 *   node bench/scenarios/secrets-proxy.mjs [--quick] [--profile]
 *
 * `--profile` also samples this thread (the proxies) while the swapped requests run, and prints the
 * functions that took the most time, self and with what they call, to stderr.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { benchCertificate } from '../lib/bench-certificate.mjs';
import { iterations, log, report } from '../lib/child.mjs';
import { distUrl } from '../lib/library.mjs';
import { interleave, summarize } from '../lib/stats.mjs';

const dist = (path) => import(new URL(`src/process/network/${path}`, distUrl).href);
const { startProxy } = await dist('proxy-server.js');
const { CallBudget } = await dist('call-budget.js');
const { parseNetRules } = await dist('rules.js');
const { parseBoundHost } = await dist('secrets/bindings.js');
const { certificatesFor } = await dist('secrets/certificate-authority.js');
const { makePlaceholder } = await dist('secrets/replace.js');
const childAgentsUrl = new URL('src/process/network/child-agents.js', distUrl).href;

const profiling = process.argv.includes('--profile');
const scratch = await mkdtemp(join(tmpdir(), 'toolhost-bench-secrets-proxy-'));
const { cert: upstreamCert, key: upstreamKey } = await benchCertificate(scratch);

// The upstream: a 1 KiB answer, kept alive.
const upstream = new Worker(
  `
  const { workerData, parentPort } = require('node:worker_threads');
  const https = require('node:https');
  const body = Buffer.alloc(1024, 'x');
  const server = https.createServer({ key: workerData.key, cert: workerData.cert }, (request, response) => {
    request.resume();
    response.end(body);
  });
  server.keepAliveTimeout = 120000;
  server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
  `,
  { eval: true, workerData: { key: upstreamKey, cert: upstreamCert } },
);
const port = await new Promise((resolve) => upstream.once('message', resolve));
const url = `https://bench.test:${port}/resource?page=1`;

const VALUE = 'bench-secret-value-0123456789';
const placeholder = makePlaceholder();
const made = await certificatesFor(['bench.test']);
const { rules } = parseNetRules([`bench.test:${port}`, `127.0.0.1:${port}`]);
const proxySecrets = {
  secrets: [
    { name: 'BENCH_TOKEN', value: VALUE, placeholder, hosts: [parseBoundHost(`bench.test:${port}`).host] },
  ],
  certificates: made.leaves,
  upstreamCa: [upstreamCert],
};

async function proxy(name, secrets) {
  const socketPath = join(scratch, `${name}.sock`);
  const server = await startProxy({
    socketPath,
    policy: {
      packageName: name,
      grant: { kind: 'hosts', asked: rules, granted: undefined },
      ownAddresses: new Set(),
      testHosts: { 'bench.test': ['127.0.0.1'] },
    },
    limits: {
      maxConnections: 64,
      maxBytesPerConnection: Number.MAX_SAFE_INTEGER,
      maxBytesPerCall: Number.MAX_SAFE_INTEGER,
      idleTimeoutMs: 120_000,
    },
    budget: new CallBudget({ limit: Number.MAX_SAFE_INTEGER, running: ['bench'], onOver: () => {} }),
    secrets,
    onNote: () => {},
  });
  return { socketPath, server };
}

// A client as a package's process is: Node's https, its global agent the one toolhost installs.
function client(socketPath, trust, token) {
  const worker = new Worker(
    `
    const { workerData, parentPort } = require('node:worker_threads');
    const https = require('node:https');
    import(workerData.childAgentsUrl).then(({ routeThroughProxy }) => {
      routeThroughProxy({ socketPath: workerData.socketPath, trustCertificates: workerData.trust });
      const once = () => new Promise((resolve, reject) => {
        const request = https.get(workerData.url, { headers: { authorization: 'Bearer ' + workerData.token } }, (response) => {
          response.resume();
          response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error('status ' + response.statusCode))));
        });
        request.on('error', reject);
      });
      parentPort.on('message', async (count) => {
        const started = performance.now();
        for (let index = 0; index < count; index += 1) await once();
        parentPort.postMessage(performance.now() - started);
      });
      parentPort.postMessage('ready');
    });
    `,
    { eval: true, workerData: { childAgentsUrl, socketPath, trust, url, token } },
  );
  // One answer awaited at a time: the worker answers each message with one.
  let pending;
  worker.on('message', (message) => pending?.resolve(message));
  worker.on('error', (error) => pending?.reject(error));
  const next = () => new Promise((resolve, reject) => (pending = { resolve, reject }));
  const ready = next();
  const run = (count) => {
    const answer = next();
    worker.postMessage(count);
    return answer;
  };
  return { worker, ready, run };
}

const proxies = {
  swapped: await proxy('swapped', proxySecrets),
  tunnelled: await proxy('tunnelled', undefined),
};
const clients = {
  swapped: client(proxies.swapped.socketPath, `${upstreamCert}\n${made.authority}`, placeholder),
  tunnelled: client(proxies.tunnelled.socketPath, upstreamCert, VALUE),
};
await Promise.all(Object.values(clients).map((one) => one.ready));

const PER_RUN = 50;
const cycles = iterations(200, 40);
log(`secrets-proxy: ${cycles} runs of ${PER_RUN} kept-alive requests per variant`);
const samples = { swapped: [], tunnelled: [] };
// What the proxies' thread was busy for, per request: its CPU time where Node can tell (23.9 and
// later: so other work on a loaded machine does not count), else its event loop's active time.
const busy = { swapped: [], tunnelled: [] };
const threadCpu = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};
const measureBusy =
  typeof process.threadCpuUsage === 'function'
    ? () => {
        const before = threadCpu();
        return () => threadCpu() - before;
      }
    : () => {
        const before = performance.eventLoopUtilization();
        return () => performance.eventLoopUtilization(before).active;
      };
await interleave({
  variants: Object.fromEntries(
    Object.keys(clients).map((variant) => [
      variant,
      async () => {
        const busyFor = measureBusy();
        samples[variant].push((await clients[variant].run(PER_RUN)) / PER_RUN);
        busy[variant].push(busyFor() / PER_RUN);
      },
    ]),
  ),
  cycles: cycles + 10,
  warmupCycles: 0,
});

if (profiling) {
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 50 });
  await post('Profiler.start');
  for (let run = 0; run < cycles; run += 1) await clients.swapped.run(PER_RUN);
  const { profile } = await post('Profiler.stop');
  session.disconnect();
  printProfile(profile);
}

for (const one of Object.values(clients)) await one.worker.terminate();
await upstream.terminate();
for (const { server } of Object.values(proxies)) {
  server.closeAllConnections?.();
  await new Promise((resolve) => server.close(resolve));
}
await rm(scratch, { recursive: true, force: true });

const settled = (lists) => ({
  swapped: summarize(lists.swapped.slice(10)),
  tunnelled: summarize(lists.tunnelled.slice(10)),
});
const keptAlive = settled(samples);
const proxyBusy = settled(busy);
report({
  perRun: PER_RUN,
  cycles,
  keptAlive,
  ratio: keptAlive.swapped.median / keptAlive.tunnelled.median,
  proxyBusy,
  proxyBusyIs: typeof process.threadCpuUsage === 'function' ? 'thread CPU time' : 'event loop active time',
});

/** The functions with the most samples, self and total (what they call included), by share. */
function printProfile(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfCounts = new Map();
  for (const id of profile.samples) selfCounts.set(id, (selfCounts.get(id) ?? 0) + 1);
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(dist|node_modules)\//, '').replace(/^node:/, '');
    return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
  };
  const self = new Map();
  const total = new Map();
  for (const [id, count] of selfCounts) {
    const node = byId.get(id);
    self.set(label(node), (self.get(label(node)) ?? 0) + count);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at));
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + count);
    }
  }
  const all = profile.samples.length;
  const top = (map, count) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, hits]) => `  ${((100 * hits) / all).toFixed(1).padStart(5)}%  ${name}`)
      .join('\n');
  process.stderr.write(
    `profile of the proxies' thread, ${all} samples\nself:\n${top(self, 40)}\ntotal:\n${top(total, 60)}\n`,
  );
}
