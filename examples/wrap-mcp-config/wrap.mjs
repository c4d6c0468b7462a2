#!/usr/bin/env node
// Wraps an existing MCP client config (Claude Desktop's claude_desktop_config.json, Claude Code's
// .mcp.json, Cursor's mcp.json) so each stdio server runs in toolhost's sandbox:
//
//   node wrap.mjs <config> [--out FILE] [--read SERVER=PATH]... [--write SERVER=PATH]...
//
// It writes a servers file (default: servers.json beside the config) that toolhost loads, each
// stdio server with the grants it gets, and prints on stdout the client config to use instead: one
// server, `toolhost serve <servers file>`, plus the remote servers as they were (toolhost hosts
// stdio servers only). On stderr it says, server by server, what each one may read and write.
//
// - `npx -y <package> ...` entries are kept as they are: toolhost runs the package installed beside
//   the config (npm install <package>) as `node <its bin>`, and leaves out one that isn't installed,
//   saying what to install (`npx toolhost mcp-config servers.json` shows it before anything runs).
//   Packages are looked for from the servers file's folder (with --out elsewhere, from there).
// - Every argument that names an existing file or folder is a read grant (server-filesystem's
//   folders); --write SERVER=PATH makes one writable. Relative paths, in arguments and in env
//   values, are resolved against the config's folder, as toolhost resolves them.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const usage = 'usage: node wrap.mjs <config> [--out FILE] [--read SERVER=PATH]... [--write SERVER=PATH]...';
let parsed;
try {
  parsed = parseArgs({
    options: {
      out: { type: 'string' },
      read: { type: 'string', multiple: true, default: [] },
      write: { type: 'string', multiple: true, default: [] },
    },
    allowPositionals: true,
  });
} catch (error) {
  stop(`${error.message}; ${usage}`);
}
if (parsed.positionals.length !== 1) stop(`expected one config file; ${usage}`);
const configPath = resolve(parsed.positionals[0]);
const configFolder = dirname(configPath);
const outPath = resolve(parsed.values.out ?? join(configFolder, 'servers.json'));

let config;
try {
  config = JSON.parse(readFileSync(configPath, 'utf8'));
} catch (error) {
  stop(`can't read ${configPath} as JSON: ${error.message}`);
}
if (typeof config?.mcpServers !== 'object' || config.mcpServers === null)
  stop(`${configPath} has no "mcpServers" object: is it an MCP client config?`);

const extraGrants = {
  read: grantsByServer(parsed.values.read, '--read'),
  write: grantsByServer(parsed.values.write, '--write'),
};
const sandboxed = {};
const clientConfig = { mcpServers: {} };
for (const [name, entry] of Object.entries(config.mcpServers)) {
  if (typeof entry?.url === 'string' || entry?.type === 'http' || entry?.type === 'sse') {
    clientConfig.mcpServers[name] = entry;
    say(`${name}: left to the client as it is: a remote server (url), which toolhost does not host`);
    continue;
  }
  const wrapped = wrapEntry(name, entry);
  if (typeof wrapped === 'string') {
    say(`${name}: not wrapped: ${wrapped}`);
    continue;
  }
  sandboxed[name] = wrapped;
  const { read = [], write = [], prefix } = wrapped.toolhost;
  say(
    `${name}: sandboxed: ${[wrapped.command, ...wrapped.args].join(' ')}; reads ${list(read)}; writes ${list(write)}; ` +
      `tools offered as ${prefix}_<name>`,
  );
}
if (Object.keys(sandboxed).length === 0) stop('no stdio server to wrap');

writeFileSync(outPath, `${JSON.stringify({ mcpServers: sandboxed }, null, 2)}\n`);
say(`wrote ${outPath}: ${Object.keys(sandboxed).length} servers, each in a sandbox of its own`);
clientConfig.mcpServers = {
  sandboxed: { command: 'npx', args: ['toolhost', 'serve', outPath] },
  ...clientConfig.mcpServers,
};
console.log(JSON.stringify(clientConfig, null, 2));

/** The entry as toolhost runs it, or why it can't be. */
function wrapEntry(name, entry) {
  if (typeof entry?.command !== 'string') return 'it has no "command"';
  const command = entry.command;
  const args = (Array.isArray(entry.args) ? entry.args.map(String) : []).map(absolute);
  const env = Object.fromEntries(
    Object.entries(entry.env ?? {}).map(([key, value]) => [
      key,
      typeof value === 'string' ? absolute(value) : value,
    ]),
  );
  const own = entry.toolhost ?? {};
  const read = unique([
    ...(own.read ?? []).map(absolute),
    // The folders and files its arguments name (past a `node <script>` entry's script).
    ...args.slice(command === 'node' ? 1 : 0).filter((arg) => isAbsolute(arg) && existsSync(arg)),
    ...(extraGrants.read.get(name) ?? []),
  ]);
  const write = unique([...(own.write ?? []).map(absolute), ...(extraGrants.write.get(name) ?? [])]);
  const prefix = own.prefix ?? (name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 32) || 'server');
  const toolhost = {
    ...own,
    prefix,
    ...(read.length > 0 ? { read } : {}),
    ...(write.length > 0 ? { write } : {}),
  };
  return { command, args, ...(Object.keys(env).length > 0 ? { env } : {}), toolhost };
}

function grantsByServer(values, flag) {
  const grants = new Map();
  for (const value of values) {
    const [server, path] = [value.slice(0, value.indexOf('=')), value.slice(value.indexOf('=') + 1)];
    if (!value.includes('=') || server === '' || path === '')
      stop(`expected ${flag} SERVER=PATH, got "${value}"`);
    const target = absolute(path.startsWith('/') ? path : `./${path.replace(/^\.\//, '')}`);
    if (!existsSync(target)) stop(`${flag} ${value}: ${target} does not exist (a grant must)`);
    grants.set(server, [...(grants.get(server) ?? []), target]);
  }
  return grants;
}

/** A `./` or `../` path against the config's folder; anything else as it is. */
function absolute(value) {
  return value.startsWith('./') || value.startsWith('../') ? resolve(configFolder, value) : value;
}

function unique(values) {
  return [...new Set(values)];
}

function list(paths) {
  return paths.length === 0 ? 'nothing of yours' : paths.join(', ');
}

function say(line) {
  console.error(`wrap: ${line}`);
}

function stop(message) {
  say(message);
  process.exit(2);
}
