/**
 * examples/wrap-mcp-config: `wrap.mjs` turns an existing Claude Desktop config into a servers file
 * that toolhost runs each server of in its sandbox, and the client config that serves them through
 * `toolhost serve`. This file tests the wrapping itself (it reads the installed servers' manifests
 * to find their bins, so each "installed" server here is its package.json); running the wrapped
 * servers through toolhost (the process tier's bubblewrap sandbox, no other tier hosts MCP servers)
 * needs MCP servers as a source (issue 44), and is tested once that lands.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { childEnv, freshDir } from './support/cli-run.js';
import { EXAMPLES } from './support/examples.js';

let root: { path: string; remove(): void };
let example: string;

beforeEach(async () => {
  root = freshDir('toolhost-example-wrap');
  example = join(root.path, 'wrap-mcp-config');
  await cp(join(EXAMPLES, 'wrap-mcp-config'), example, { recursive: true });
});

afterEach(() => root.remove());

/** What `npm install` leaves of a server that wrap.mjs reads: its manifest, naming its bin. */
async function install(name: string): Promise<string> {
  const folder = join(example, 'node_modules', name);
  await mkdir(join(folder, 'dist'), { recursive: true });
  const bin = { [name.replace('@modelcontextprotocol/server-', 'mcp-server-')]: 'dist/index.js' };
  await writeFile(join(folder, 'package.json'), JSON.stringify({ name, version: '2026.8.31', bin }));
  await writeFile(join(folder, 'dist/index.js'), '#!/usr/bin/env node\n');
  return join(folder, 'dist/index.js');
}

interface WrapRun {
  code: number | null;
  stdout: string;
  lines: string[];
}

function wrap(args: readonly string[]): Promise<WrapRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(example, 'wrap.mjs'), ...args],
      { cwd: example, env: childEnv({ tmpDir: root.path }), timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, lines: stderr.split('\n').filter((line) => line !== '') });
      },
    );
  });
}

describe('examples/wrap-mcp-config: wrap.mjs (for the process tier, the only one that hosts MCP servers)', () => {
  it('wraps each installed stdio server with its grants and leaves the remote one to the client', async () => {
    const filesystem = await install('@modelcontextprotocol/server-filesystem');
    const memory = await install('@modelcontextprotocol/server-memory');
    const run = await wrap([
      'claude_desktop_config.json',
      '--write',
      'filesystem=notes/inbox',
      '--write',
      'memory=memory',
    ]);
    const servers = join(example, 'servers.json');
    expect(run.lines).toEqual([
      `wrap: filesystem: sandboxed: node ${filesystem} ${example}/notes; reads ${example}/notes; writes ${example}/notes/inbox; tools offered as filesystem_<name>`,
      `wrap: memory: sandboxed: node ${memory}; reads nothing of yours; writes ${example}/memory; tools offered as memory_<name>`,
      'wrap: docs-search: left to the client as it is: a remote server (url), which toolhost does not host',
      `wrap: wrote ${servers}: 2 servers, each in a sandbox of its own`,
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      mcpServers: {
        sandboxed: { command: 'npx', args: ['toolhost', 'serve', servers] },
        'docs-search': { url: 'https://mcp.example.com/mcp' },
      },
    });
    expect(JSON.parse(await readFile(servers, 'utf8'))).toEqual({
      mcpServers: {
        filesystem: {
          command: 'node',
          args: [filesystem, `${example}/notes`],
          toolhost: { prefix: 'filesystem', read: [`${example}/notes`], write: [`${example}/notes/inbox`] },
        },
        memory: {
          command: 'node',
          args: [memory],
          env: { MEMORY_FILE_PATH: `${example}/memory/graph.jsonl` },
          toolhost: { prefix: 'memory', write: [`${example}/memory`] },
        },
      },
    });
  });

  it('does not wrap a server npx would fetch at start, saying what to install', async () => {
    await install('@modelcontextprotocol/server-filesystem');
    const run = await wrap(['claude_desktop_config.json', '--out', join(root.path, 'elsewhere.json')]);
    expect(run.lines[1]).toBe(
      `wrap: memory: not wrapped: npx fetches @modelcontextprotocol/server-memory at each start, and a sandboxed server has no network: run npm install @modelcontextprotocol/server-memory in ${example}, then wrap again`,
    );
    expect(run.code).toBe(0);
    const written = JSON.parse(await readFile(join(root.path, 'elsewhere.json'), 'utf8')) as {
      mcpServers: Record<string, unknown>;
    };
    expect(Object.keys(written.mcpServers)).toEqual(['filesystem']);
  });

  it('keeps the grants and prefix an entry already names', async () => {
    await install('@modelcontextprotocol/server-filesystem');
    const config = {
      mcpServers: {
        files: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem@2026.8.31', './notes'],
          toolhost: { prefix: 'fs', write: ['./notes/inbox'], timeoutMs: 5000 },
        },
      },
    };
    await writeFile(join(example, 'mine.json'), JSON.stringify(config));
    const run = await wrap(['mine.json']);
    expect(run.code).toBe(0);
    const written = JSON.parse(await readFile(join(example, 'servers.json'), 'utf8')) as {
      mcpServers: { files: { toolhost: unknown } };
    };
    expect(written.mcpServers.files.toolhost).toEqual({
      prefix: 'fs',
      write: [`${example}/notes/inbox`],
      timeoutMs: 5000,
      read: [`${example}/notes`],
    });
  });

  it.each([
    [
      [],
      'wrap: expected one config file; usage: node wrap.mjs <config> [--out FILE] [--read SERVER=PATH]... [--write SERVER=PATH]...',
    ],
    [
      ['package.json'],
      `wrap: ${'EXAMPLE'}/package.json has no "mcpServers" object: is it an MCP client config?`,
    ],
    [
      ['claude_desktop_config.json', '--write', 'memory=nowhere'],
      `wrap: --write memory=nowhere: ${'EXAMPLE'}/nowhere does not exist (a grant must)`,
    ],
    [['claude_desktop_config.json', '--write', 'memory'], 'wrap: expected --write SERVER=PATH, got "memory"'],
  ])('refuses %j in one line, exit 2, writing nothing', async (args, line) => {
    const run = await wrap(args);
    expect(run.lines).toEqual([line.replace('EXAMPLE', example)]);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
    await expect(readFile(join(example, 'servers.json'))).rejects.toThrow(/ENOENT/);
  });
});
