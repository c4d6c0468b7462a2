/**
 * Where a `toolhost serve --http` `tools/call` spends the serving process's time: `node
 * bench/serve-http-profile.mjs [--calls=3000] [--era=modern|legacy]` (after `npm run build`;
 * TOOLHOST_BENCH_DIST=<a folder laid out like dist/> profiles another build). It starts serve
 * under V8's CPU profiler (a sample every 100 µs), makes the calls one at a time through the official
 * client (2.x pinned to 2026-07-28, or 1.x on 2025-11-25), stops serve, and prints per call: the
 * process's busy time, then the frames of toolhost's MCP layer and of the MCP SDK by inclusive time
 * (a frame's own time and what it called), the heaviest first.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchToolsDir, distUrl } from './lib/library.mjs';
import { startServeHttp } from './lib/raw-mcp.mjs';

const option = (name, fallback) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const calls = Number(option('calls', '3000'));
const era = option('era', 'modern');
const warmup = 300;

const cli = fileURLToPath(new URL('src/cli/main.js', distUrl));
const env = { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '/tmp' };
const profiles = mkdtempSync(join(tmpdir(), 'toolhost-serve-profile-'));
const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${profiles}`, '--cpu-prof-interval=100'];
const served = await startServeHttp({ cli, tools: fileURLToPath(benchToolsDir), env, nodeArgs });

// Without the transport's signal: undici keeps an abort listener per request on it.
const fetchUnsignalled = (input, init) => fetch(input, { ...init, signal: undefined });
const client =
  era === 'modern'
    ? new ModernClient(
        { name: 'bench', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      )
    : new Client({ name: 'bench', version: '1.0.0' });
const Transport = era === 'modern' ? ModernHttp : StreamableHTTPClientTransport;
await client.connect(new Transport(new URL(served.url), { fetch: fetchUnsignalled }));
for (let index = 0; index < warmup + calls; index += 1) {
  const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  if (result.isError || result.content[0]?.text !== 'hello') throw new Error(JSON.stringify(result));
}
await client.close();
const exited = new Promise((resolve) => served.child.once('exit', resolve));
served.child.kill('SIGTERM');
await exited;

const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8'));
rmSync(profiles, { recursive: true, force: true });

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
const keyOf = (node) =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').slice(-2).join('/')}:${node.callFrame.lineNumber + 1}`;
const inclusive = new Map();
let busy = 0;
profile.samples.forEach((id, index) => {
  const micros = profile.timeDeltas[index] ?? 0;
  if (nodes.get(id).callFrame.functionName === '(idle)') return;
  busy += micros;
  const seen = new Set();
  for (let at = id; at !== undefined; at = parents.get(at)) {
    const key = keyOf(nodes.get(at));
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + micros);
  }
});
// The warm-up's calls are in the profile too.
const perCall = (micros) => (micros / (warmup + calls)).toFixed(1).padStart(7);
console.log(`${era}: ${calls} calls (+${warmup} warm-up), serving process busy ${perCall(busy)} µs per call`);
console.log('µs per call, inclusive: toolhost MCP layer (mcp/) and the MCP SDK (@modelcontextprotocol)');
const mcpFrame = /^\S+ (mcp\/|dist\/(src|mcp|index)-?)/;
for (const [key, micros] of [...inclusive].sort((a, b) => b[1] - a[1])) {
  if (mcpFrame.test(key) && micros / (warmup + calls) >= 1) console.log(`${perCall(micros)}  ${key}`);
}
