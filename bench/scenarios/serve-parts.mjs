/**
 * 20. Where a `toolhost serve` `tools/call` goes: the same trivial call, one at a time, through
 * each layer added in turn, interleaved call by call so every layer shares the machine's noise:
 *
 * - `hostCall`: `host.call` in this process (the baseline of section 8);
 * - `serverInProcess`: toolhost's MCP server (`ToolServer`, the SDK's `Server`) in this process,
 *   spoken to by hand through transports that only clone each message through JSON: the SDK's
 *   server layers and toolhost's `tools/call` handler, without any process or wire;
 * - `sdkInProcess`: the same with the official client (1.x): its layers added;
 * - `echoOne` and `echoTwo`: a line through one node process that echoes it, and through two in a
 *   chain (the relay's and the hosting process's hops with nothing in them): what each process a
 *   call passes through costs on this machine, its wake-ups and copies;
 * - `hostingRaw`: the hosting process (serve-child.js) alone, spoken to on its channel by hand
 *   (no relay, no SDK client): a second process, the channel's signing, the SDK's server there;
 * - `stdioRaw`: `toolhost serve` over stdio spoken to by hand: in the default tier (`process`) serve
 *   in one process, the host and the SDK's server on stdio directly (no relay, no hosting process;
 *   `hostingRaw` is what the relay's path costs without the relay; the baseline rows, with it);
 * - `stdio`: the same through the official client (section 8's row): the client's own layers;
 * - `stdioModernRaw` and `stdioModern`: the same on 2026-07-28, by hand (the envelope on every
 *   request) and through the official 2.x client pinned to it: what the newer revision costs the
 *   server, and what it costs the client;
 * - `httpEcho`: a POST by hand to a bare `node:http` process that answers a fixed JSON: the floor
 *   under any HTTP serving (the client's `fetch`, Node's HTTP server, the process's wake-up);
 * - `httpRaw` and `http`: `toolhost serve --http`, a POST by hand and through the official client;
 *   `httpModernRaw` and `httpModern`: the same on 2026-07-28, by hand (the envelope and the
 *   standard headers on every request) and through the official 2.x client pinned to it.
 *
 * TOOLHOST_BENCH_BASELINE_DIST=<a copy of dist/ whose parent folder holds a copy of package.json and
 * node_modules (a link to the repository's will do)> adds `stdioBefore`, `httpBefore` and
 * `httpModernBefore`: that build's `serve` through the official clients, in the same run, so a
 * change is measured against the build before it.
 */
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
import {
  echoChain,
  httpEcho,
  linkedTransports,
  rawHosting,
  rawHttp,
  rawLinked,
  rawStdio,
  startServeHttp,
} from '../lib/raw-mcp.mjs';
import { interleave, runWindow, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const { ToolServer } = await import(new URL('src/mcp/tool-server.js', distUrl).href);
const { parseCommandLine } = await import(new URL('src/cli/args/args.js', distUrl).href);
const cliOf = (dist) => fileURLToPath(new URL('src/cli/main.js', dist));
const cli = cliOf(distUrl);
const tools = fileURLToPath(benchToolsDir);
const args = { text: 'hello' };
const env = { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '/tmp' };
const baselineDist = process.env.TOOLHOST_BENCH_BASELINE_DIST;

const host = new ToolHost({ logger: quietLogger() });
await host.load(tools);

const startHttp = (cliPath) => startServeHttp({ cli: cliPath, tools, env });

async function sdkStdio(cliPath) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'serve', tools],
      env,
      stderr: 'ignore',
    }),
  );
  return client;
}

async function sdkStdioModern(cliPath) {
  const client = new ModernClient(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new ModernStdio({ command: process.execPath, args: [cliPath, 'serve', tools], env, stderr: 'ignore' }),
  );
  return client;
}

async function sdkHttp(url) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: (input, init) => fetch(input, { ...init, signal: undefined }),
    }),
  );
  return client;
}

async function sdkHttpModern(url) {
  const client = new ModernClient(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new ModernHttp(new URL(url), { fetch: (input, init) => fetch(input, { ...init, signal: undefined }) }),
  );
  return client;
}

const toolServer = new ToolServer(host, {
  name: 'toolhost',
  version: '0.0.0',
  listChanged: true,
  legacyLogScope: 'connection',
});
const linked = linkedTransports();
await toolServer.createServer({ era: 'legacy' }).connect(linked.server);
const inProcess = new Client({ name: 'bench', version: '1.0.0' });
await inProcess.connect(linked.client);
const byHandLinked = linkedTransports();
await toolServer.createServer({ era: 'legacy' }).connect(byHandLinked.server);
const serverByHand = await rawLinked(byHandLinked.client);

const hosting = await rawHosting({
  entry: fileURLToPath(new URL('src/cli/commands/serve-child.js', distUrl)),
  settings: parseCommandLine(['serve', tools], env),
  env,
});
const echoOne = echoChain(1, env);
const echoTwo = echoChain(2, env);
const bareHttp = await httpEcho(env);
const stdioByHand = await rawStdio({ cli, tools, env });
const stdioClient = await sdkStdio(cli);
const stdioModernByHand = await rawStdio({ cli, tools, env, modern: true });
const stdioModernClient = await sdkStdioModern(cli);
const served = await startHttp(cli);
const httpClient = await sdkHttp(served.url);
const httpModernClient = await sdkHttpModern(served.url);
const httpByHand = rawHttp(served.url);
const httpModernByHand = rawHttp(served.url, { modern: true });
// A 2026-07-28 client's first request goes through the SDK's entry (as a 2.x client's discovery does).
await httpModernByHand.request('tools/list', {});

const callParams = { name: 'echo', arguments: args };
const viaClient = (client) => async () => {
  const result = await client.callTool(callParams);
  if (result.isError || result.content[0]?.text !== 'hello') throw new Error(JSON.stringify(result));
};
const byHand = (rpc) => async () => {
  const answer = await rpc.request('tools/call', callParams);
  if (answer.result?.content?.[0]?.text !== 'hello') throw new Error(JSON.stringify(answer));
};
const variants = {
  hostCall: async () => {
    const outcome = await host.call('echo', args);
    if (outcome.isError) throw new Error(JSON.stringify(outcome));
  },
  serverInProcess: byHand(serverByHand),
  sdkInProcess: viaClient(inProcess),
  echoOne: echoOne.roundTrip,
  echoTwo: echoTwo.roundTrip,
  hostingRaw: byHand(hosting.rpc),
  stdioRaw: byHand(stdioByHand.rpc),
  stdio: viaClient(stdioClient),
  stdioModernRaw: byHand(stdioModernByHand.rpc),
  stdioModern: viaClient(stdioModernClient),
  httpEcho: byHand(bareHttp.rpc),
  httpRaw: byHand(httpByHand),
  http: viaClient(httpClient),
  httpModernRaw: byHand(httpModernByHand),
  httpModern: viaClient(httpModernClient),
};

const closers = [];
if (baselineDist !== undefined) {
  const before = new URL(`${pathToFileURL(resolve(baselineDist)).href}/`);
  const beforeStdio = await sdkStdio(cliOf(before));
  const beforeServed = await startHttp(cliOf(before));
  const beforeHttp = await sdkHttp(beforeServed.url);
  const beforeHttpModern = await sdkHttpModern(beforeServed.url);
  variants.stdioBefore = viaClient(beforeStdio);
  variants.httpBefore = viaClient(beforeHttp);
  variants.httpModernBefore = viaClient(beforeHttpModern);
  closers.push(
    () => beforeStdio.close(),
    () => beforeHttp.close(),
    () => beforeHttpModern.close(),
    () => beforeServed.child.kill('SIGTERM'),
  );
}

for (const variant of Object.values(variants)) await runWindow({ total: 200, window: 4, makeCall: variant });

const cycles = iterations(2000, 300);
log(`serve parts: ${cycles} cycles, ${Object.keys(variants).length} paths`);
const samples = await interleave({ variants, cycles, warmupCycles: iterations(200, 50) });

await Promise.all([
  inProcess.close(),
  stdioClient.close(),
  stdioModernClient.close(),
  httpClient.close(),
  httpModernClient.close(),
  ...closers.map((close) => close()),
]);
stdioByHand.close();
stdioModernByHand.close();
echoOne.close();
echoTwo.close();
bareHttp.close();
hosting.close();
served.child.kill('SIGTERM');
toolServer.close();
await host.close();

report({
  cycles,
  baseline: baselineDist ?? null,
  roundTrip: Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, summarize(values)])),
});
