/**
 * 18. MCP servers through toolhost (issue 44): the same real server
 * (@modelcontextprotocol/server-everything, its `echo` tool) run directly by the official client
 * (`direct`), and wrapped: loaded from an `mcpServers` config by `host.load` and called with
 * `host.call` (`hostCall`), and served by `toolhost serve servers.json` to the same official client
 * (`serve`). Interleaved per sample:
 *   - a trivial `tools/call` round trip (targets: ≤ 1.3× direct);
 *   - start until `tools/list` is answered: a fresh client (or host) starting the server, reading its
 *     list, ending it (target: ≤ 1.5× direct);
 *   - an idle wrapped server's memory beyond the server's own: the RSS of the sandbox's processes
 *     around the server (bubblewrap's) plus what the host's heap grew by for it (target ≤ 10 MB).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { iterations, log, report } from '../lib/child.mjs';
import { distUrl, importToolhost, quietLogger } from '../lib/library.mjs';
import { memoryOf } from '../lib/process-memory.mjs';
import { collectGarbage, interleave, sleep, summarize } from '../lib/stats.mjs';

const { ToolHost } = await importToolhost();
const { descendantsOf } = await import(new URL('src/shared/process-tree.js', distUrl).href);
const cli = fileURLToPath(new URL('src/cli/main.js', distUrl));
const server = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const env = { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '/tmp' };
const folder = mkdtempSync(join(tmpdir(), 'toolhost-bench-servers-'));
const config = join(folder, 'servers.json');
writeFileSync(
  config,
  JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [server, 'stdio'] } } }),
);
const args = { message: 'hello' };

async function connect(command, commandArgs) {
  const transport = new StdioClientTransport({ command, args: commandArgs, env, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}
const direct = () => connect(process.execPath, [server, 'stdio']);
const served = () => connect(process.execPath, [cli, 'serve', '--isolation', 'process', config]);
const checked = (text) => {
  if (text !== 'Echo: hello') throw new Error(`unexpected answer ${JSON.stringify(text)}`);
};

// Idle memory, first, while no other server runs: the wrapped server's sandbox around it, and the
// host's heap for it.
await collectGarbage();
const heapBefore = process.memoryUsage().heapUsed;
const idle = new ToolHost({ logger: quietLogger(), isolation: 'process' });
await idle.load(config);
await sleep(1000);
await collectGarbage();
const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
const mine = new Set(descendantsOf(process.pid));
const tree = [...mine].filter((pid) => commandOf(pid).includes('everything/dist/index.js'));
// The server's own processes are the Node ones running its script; bubblewrap's are around them.
const serverPids = tree.filter(
  (pid) => !commandOf(pid).startsWith('bwrap') && !commandOf(pid).includes('/bwrap'),
);
const sandboxPids = tree.filter((pid) => !serverPids.includes(pid));
const idleMemory = {
  serverRss: memoryOf(serverPids).rss,
  sandboxRss: memoryOf(sandboxPids).rss,
  hostHeapGrowth: heapGrowth,
};
await idle.close();

// The round trip: one of each, kept open.
const directClient = (await direct()).client;
const servedClient = (await served()).client;
const host = new ToolHost({ logger: quietLogger(), isolation: 'process' });
await host.load(config);
const call = (client) => async () =>
  checked((await client.callTool({ name: 'echo', arguments: args })).content[0]?.text);
const roundTripVariants = {
  direct: call(directClient),
  serve: call(servedClient),
  hostCall: async () => checked((await host.call('echo', args)).content[0]?.text),
};
const cycles = iterations(1000, 150);
log(`mcp servers round trip: ${cycles} cycles`);
const roundTrip = await interleave({
  variants: roundTripVariants,
  cycles,
  warmupCycles: iterations(100, 20),
});

// Start until tools/list, fresh each time.
const startVariants = {
  direct: async () => {
    const { client } = await direct();
    if ((await client.listTools()).tools.length === 0) throw new Error('no tools');
    await client.close();
  },
  serve: async () => {
    const { client } = await served();
    if ((await client.listTools()).tools.length === 0) throw new Error('no tools');
    await client.close();
  },
  hostLoad: async () => {
    const fresh = new ToolHost({ logger: quietLogger(), isolation: 'process' });
    await fresh.load(config);
    if (fresh.list().length === 0) throw new Error('no tools');
    await fresh.close();
  },
};
const starts = iterations(20, 5);
log(`mcp servers start until tools/list: ${starts} cycles`);
const start = await interleave({ variants: startVariants, cycles: starts, warmupCycles: 1 });

await Promise.all([directClient.close(), servedClient.close(), host.close()]);
rmSync(folder, { recursive: true, force: true });

const summary = (samples) =>
  Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, summarize(values)]));
report({ cycles, starts, roundTrip: summary(roundTrip), start: summary(start), idleMemory });

function commandOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}
