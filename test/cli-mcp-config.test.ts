/**
 * `toolhost mcp-config`: what it prints starts a server the SDK client can use, run as written
 * from another working directory (where `npx toolhost` would fail), over stdio and over HTTP.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { Readable } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import type { McpConfigJson } from '../src/cli/commands/mcp-config.js';
import { freshDir, runCli, stderrLines } from './support/cli-run.js';
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

  it('names a path that does not exist, with exit 2 and one line', async () => {
    const result = await runCli(['mcp-config', 'nowhere'], { tmpDir: tmp.path, cwd: tmp.path });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toEqual([`toolhost: no such file or directory: ${tmp.path}/nowhere`]);
  });
});
