/**
 * `toolhost mcp-config`: what it prints starts a server the SDK client can use, run as written
 * from another working directory (where `npx toolhost` would fail), over stdio and over HTTP.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import type { McpConfigJson } from '../src/cli/commands/mcp-config.js';
import { freshDir, REPO, runCli, stderrLines } from './support/cli-run.js';
import { exited, GOOD, StderrLog, serveEnv } from './support/mcp-serve.js';

/** A port free a moment ago (the config must name a real one). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('toolhost mcp-config', () => {
  const tmp = freshDir('toolhost-mcp-config');
  afterAll(() => tmp.remove());

  const configs = async (args: string[]): Promise<McpConfigJson> => {
    const result = await runCli(['mcp-config', '--json', ...args], { tmpDir: tmp.path });
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as McpConfigJson;
  };

  it('prints a Claude Desktop entry that starts a working server from another folder', async () => {
    const printed = await configs(['--name', 'my-tools', GOOD]);
    const entry = printed.stdio.claudeDesktop.mcpServers['my-tools'];
    expect(entry?.command).toBe(process.execPath);
    expect(printed.stdio.claudeCode.slice(0, 5)).toEqual(['claude', 'mcp', 'add', 'my-tools', '--']);
    expect(printed.stdio.vscode.servers['my-tools']).toEqual({ type: 'stdio', ...entry });
    const transport = new StdioClientTransport({
      command: entry?.command ?? '',
      args: entry?.args ?? [],
      cwd: tmp.path,
      env: serveEnv(tmp.path),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'say', arguments: { text: 'from elsewhere' } });
      expect(result.content).toEqual([{ type: 'text', text: 'you said: from elsewhere' }]);
    } finally {
      await client.close();
    }
  });

  it('prints an HTTP serve command and a URL the client reaches, from another folder', async () => {
    const port = await freePort();
    const printed = await configs(['--http', `127.0.0.1:${port}`, GOOD]);
    expect(printed.http.url).toBe(`http://127.0.0.1:${port}/mcp`);
    expect(printed.http.vscode.servers['toolhost']).toEqual({ type: 'http', url: printed.http.url });
    const child = spawn(printed.http.serve.command, printed.http.serve.args, {
      cwd: tmp.path,
      env: serveEnv(tmp.path),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stderr = new StderrLog(child.stderr as Readable);
    try {
      await stderr.waitFor(/over MCP at /);
      const client = new Client(
        { name: 'toolhost-tests', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(printed.http.url)));
      const result = await client.callTool({ name: 'say', arguments: { text: 'over http' } });
      expect(result.content).toEqual([{ type: 'text', text: 'you said: over http' }]);
      await client.close();
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });

  it('names on stderr the --allow-network each package that asks for the network must be served with', async () => {
    const asking = (name: string | undefined, net: unknown): string => {
      const folder = join(tmp.path, `asks-${name ?? 'nameless'}`);
      mkdirSync(folder, { recursive: true });
      const manifest = { ...(name === undefined ? {} : { name }), type: 'module' };
      writeFileSync(
        join(folder, 'package.json'),
        JSON.stringify({ ...manifest, toolhost: { tools: ['./fetch.js'], permissions: { net } } }),
      );
      writeFileSync(
        join(folder, 'fetch.js'),
        "export const name = 'fetch_page'; export const description = 'Fetches'; export const parameterSchema = { type: 'object' }; export const run = () => 'ok';\n",
      );
      return folder;
    };
    const weather = asking('weather', ['api.weather.gov', '*.example.com:443']);
    const everything = asking('crawler', true);
    const nameless = asking(undefined, true);
    const result = await runCli(['mcp-config', GOOD, weather, everything, nameless], { tmpDir: tmp.path });
    expect(result.code).toBe(0);
    expect(stderrLines(result)).toEqual([
      "toolhost: package weather asks for the network: api.weather.gov, *.example.com:443; the configurations above don't grant it: add --allow-network weather to the serve command (or --allow-network weather=HOST,... for some of those hosts), or its tools get none",
      "toolhost: package crawler asks for all of the network; the configurations above don't grant it: add --allow-network crawler to the serve command (or --allow-network crawler=HOST,... for some of those hosts), or its tools get none",
      `toolhost: ${nameless} asks for all of the network, but its package.json has no "name", which --allow-network grants by: give it one, then add --allow-network <name> to the serve command`,
    ]);
    // The configurations grant nothing themselves; --json carries what stderr says.
    expect(result.stdout).not.toContain('--allow-network');
    const printed = await configs([GOOD, weather]);
    expect(printed.stdio.serve.args).not.toContain('--allow-network');
    expect(printed.packages).toEqual([
      {
        path: weather,
        name: 'weather',
        net: ['api.weather.gov', '*.example.com:443'],
        allowNetwork: ['--allow-network', 'weather'],
      },
    ]);
  });

  it('names a path that does not exist, with exit 2 and one line', async () => {
    const result = await runCli(['mcp-config', 'nowhere'], { tmpDir: tmp.path, cwd: tmp.path });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toEqual([`toolhost: no such file or directory: ${tmp.path}/nowhere`]);
  });
});

describe('toolhost mcp-config of an MCP client config (servers.json)', () => {
  const tmp = freshDir('toolhost-mcp-config-servers');
  const elsewhere = freshDir('toolhost-mcp-config-elsewhere');
  afterAll(() => {
    tmp.remove();
    elsewhere.remove();
  });
  const RUG_PULL = join(REPO, 'fixtures/mcp-servers/rug-pull/server.mjs');
  const config = join(tmp.path, 'servers.json');
  const lock = join(tmp.path, 'toolhost.lock.json');
  mkdirSync(join(tmp.path, 'data'));
  mkdirSync(join(tmp.path, 'out'));
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        weather: {
          command: process.execPath,
          args: [RUG_PULL],
          env: { LOG_LEVEL: 'warn' },
          toolhost: { read: ['./data'], write: ['./out'], allowEnv: ['HOME'], prefix: 'w', timeoutMs: 5000 },
        },
        remote: { url: 'https://example.com/mcp' },
      },
    }),
  );

  it('prints a config that serves the pinned servers through toolhost, which the official client drives from another folder', async () => {
    const pinned = await runCli(['pin', config, '--lock', lock], { tmpDir: tmp.path, cwd: tmp.path });
    expect(pinned.stdout).toContain('servers.json#weather/weather');
    const result = await runCli(['mcp-config', '--json', '--lock', lock, config], { tmpDir: tmp.path });
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as McpConfigJson;
    expect(printed.servers).toEqual([
      {
        config,
        name: 'weather',
        command: process.execPath,
        args: [RUG_PULL],
        grants: {
          read: [join(tmp.path, 'data')],
          write: [join(tmp.path, 'out')],
          net: false,
          secrets: {},
          allowEnv: ['HOME'],
          prefix: 'w',
          timeoutMs: 5000,
        },
        env: ['LOG_LEVEL'],
      },
      {
        config,
        name: 'remote',
        leftOut: 'remote is a remote server (url): toolhost hosts stdio servers only',
      },
    ]);
    const entry = printed.stdio.claudeDesktop.mcpServers['toolhost'];
    expect(entry?.args.slice(1)).toEqual(['serve', '--lock', lock, config]);
    const transport = new StdioClientTransport({
      command: entry?.command ?? '',
      args: entry?.args ?? [],
      cwd: elsewhere.path,
      env: serveEnv(elsewhere.path),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['w_relist', 'w_weather']);
      const answer = await client.callTool({ name: 'w_weather', arguments: { city: 'Lima' } });
      expect(answer.content).toEqual([{ type: 'text', text: 'sunny in Lima' }]);
    } finally {
      await client.close();
    }
  });

  it("says on stderr which grants each server gets, keeping stdout's configurations JSON", async () => {
    const result = await runCli(['mcp-config', config], { tmpDir: tmp.path });
    expect(result.code).toBe(0);
    const desktop = /## Claude Desktop \(claude_desktop_config.json\)\n([\s\S]*?)\n\n/.exec(
      result.stdout,
    )?.[1];
    expect(JSON.parse(desktop ?? '')).toHaveProperty('mcpServers.toolhost');
    expect(result.stdout).not.toContain('grants');
    expect(stderrLines(result)).toEqual([
      `toolhost: the MCP servers of ${config} will run in bubblewrap, each with only these grants:`,
      `  weather: ${process.execPath} ${RUG_PULL}`,
      `    reads: its program, its package and dependencies; ${join(tmp.path, 'data')}`,
      `    writes: a tmp folder of its own; ${join(tmp.path, 'out')}`,
      '    network: none',
      '    host environment: HOME; set by the config: LOG_LEVEL',
      '    tools named: w_<name>; timeout: 5000 ms',
      '  remote: left out: remote is a remote server (url): toolhost hosts stdio servers only',
      'toolhost: not pinned: review the tools (toolhost list), pin them (toolhost pin), and pass --lock so a changed server is withheld',
    ]);
  });

  it("warns that a client's own config file, wrapped in place, would start its servers twice", async () => {
    const own = join(tmp.path, '.mcp.json');
    writeFileSync(
      own,
      JSON.stringify({ mcpServers: { weather: { command: process.execPath, args: [RUG_PULL] } } }),
    );
    const result = await runCli(['mcp-config', own], { tmpDir: tmp.path });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `toolhost: warning: ${own} is a file MCP clients read themselves: a client given both it and this config starts its servers twice, once without a sandbox.`,
    );
  });

  it('refuses a --lock that is not a lock, with exit 2 and one line', async () => {
    const result = await runCli(['mcp-config', '--lock', config, config], { tmpDir: tmp.path });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toHaveLength(1);
    expect(stderrLines(result)).toEqual([
      `toolhost: the lock file ${config} can't be used: its format is not named, expected "toolhost-lock/1"`,
    ]);
  });
});
