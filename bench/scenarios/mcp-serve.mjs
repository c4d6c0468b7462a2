/**
 * 8. `toolhost serve`: one `tools/call` round trip of a trivial tool through the official MCP clients,
 * for both protocol eras (the v1 client on 2025-11-25, the v2 client pinned to 2026-07-28), over
 * stdio (in the default tier, `process`: serve in one process, no relay) and over stateless
 * Streamable HTTP, against
 * `host.call` of the same tool in this process, interleaved per call. Then calls/s with many calls in
 * flight through one HTTP instance and through two behind a round-robin client, batches alternating.
 */
import { fileURLToPath } from 'node:url';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { iterations, log, report } from '../lib/child.mjs';
import { benchToolsDir, distUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { startServeHttp } from '../lib/raw-mcp.mjs';
import { interleave, runWindow, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const cli = fileURLToPath(new URL('src/cli/main.js', distUrl));
const tools = fileURLToPath(benchToolsDir);
const args = { text: 'hello' };
const env = { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '/tmp' };

const host = new ToolHost({ logger: quietLogger() });
await host.load(tools);

const startHttp = () => startServeHttp({ cli, tools, env });

async function httpClient(urls) {
  let next = 0;
  // Every request goes to the next instance in turn: a round-robin balancer in front of stateless
  // servers. Without the transport's signal: undici keeps an abort listener per request on it, and
  // thousands of requests on one client flood stderr with MaxListenersExceededWarning.
  const roundRobin = (_input, init) => fetch(urls[next++ % urls.length], { ...init, signal: undefined });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(urls[0]), { fetch: roundRobin }));
  return client;
}

const stdioClient = new Client({ name: 'bench', version: '1.0.0' });
await stdioClient.connect(
  new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', tools], env, stderr: 'ignore' }),
);
const pinned = { versionNegotiation: { mode: { pin: '2026-07-28' } } };
const stdioModern = new ModernClient({ name: 'bench', version: '1.0.0' }, pinned);
await stdioModern.connect(
  new ModernStdio({ command: process.execPath, args: [cli, 'serve', tools], env, stderr: 'ignore' }),
);
const [first, second] = await Promise.all([startHttp(), startHttp()]);
const httpModern = new ModernClient({ name: 'bench', version: '1.0.0' }, pinned);
await httpModern.connect(
  new ModernHttp(new URL(first.url), {
    fetch: (input, init) => fetch(input, { ...init, signal: undefined }),
  }),
);
const oneHttp = await httpClient([first.url]);
const twoHttp = await httpClient([first.url, second.url]);

const call = (client) => async () => {
  const result = await client.callTool({ name: 'echo', arguments: args });
  if (result.isError || result.content[0]?.text !== 'hello') throw new Error(JSON.stringify(result));
};
const variants = {
  hostCall: async () => {
    const outcome = await host.call('echo', args);
    if (outcome.isError) throw new Error(JSON.stringify(outcome));
  },
  stdio: call(stdioClient),
  http: call(oneHttp),
  stdioModern: call(stdioModern),
  httpModern: call(httpModern),
};

// Every path starts its workers and warms its code before anything is measured.
for (const variant of Object.values(variants)) await runWindow({ total: 200, window: 8, makeCall: variant });
await runWindow({ total: 200, window: 8, makeCall: call(twoHttp) });

const cycles = iterations(2000, 300);
log(`mcp round trip: ${cycles} cycles`);
const samples = await interleave({ variants, cycles, warmupCycles: iterations(200, 50) });

const window = 32;
const callsPerBatch = iterations(2000, 600);
const batches = iterations(6, 2);
log(`mcp throughput: ${batches} batches of ${callsPerBatch} calls per variant, ${window} in flight`);
const throughputVariants = { oneInstance: call(oneHttp), twoInstances: call(twoHttp) };
const perVariant = { oneInstance: [], twoInstances: [] };
const latencies = { oneInstance: [], twoInstances: [] };
for (let batch = 0; batch < batches; batch += 1) {
  const order = batch % 2 === 0 ? ['oneInstance', 'twoInstances'] : ['twoInstances', 'oneInstance'];
  for (const name of order) {
    const measured = await runWindow({ total: callsPerBatch, window, makeCall: throughputVariants[name] });
    perVariant[name].push((callsPerBatch / measured.wallMs) * 1000);
    latencies[name].push(...measured.latencies);
  }
}

await Promise.all([
  stdioClient.close(),
  oneHttp.close(),
  twoHttp.close(),
  stdioModern.close(),
  httpModern.close(),
]);
for (const { child } of [first, second]) child.kill('SIGTERM');
await host.close();

report({
  cycles,
  window,
  callsPerBatch,
  batches,
  roundTrip: Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, summarize(values)])),
  throughput: Object.fromEntries(
    Object.keys(perVariant).map((name) => [
      name,
      { callsPerSecond: summarize(perVariant[name]), latency: summarize(latencies[name]) },
    ]),
  ),
});
