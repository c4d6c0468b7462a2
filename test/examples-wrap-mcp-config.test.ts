/**
 * examples/wrap-mcp-config: `wrap.mjs` turns an existing Claude Desktop config into a servers file
 * that toolhost runs each server of in its sandbox, and the client config that serves them through
 * `toolhost serve`. The wrapping itself is tested without servers installed (wrap.mjs keeps `npx`
 * entries, which toolhost resolves at load), and what toolhost makes of them with one "installed" as
 * its package.json and bin; then the real server-filesystem and server-memory,
 * installed beside the config, run wrapped through toolhost in bubblewrap (MCP servers run in the
 * process tier's sandbox only).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { childEnv, freshDir, runCli } from './support/cli-run.js';
import { EXAMPLES, layOutExample } from './support/examples.js';

const { sandbox } = await processEnvironment();

let root: { path: string; remove(): void };
let example: string;

beforeEach(async () => {
  root = freshDir('toolhost-example-wrap');
  example = join(root.path, 'wrap-mcp-config');
  await cp(join(EXAMPLES, 'wrap-mcp-config'), example, { recursive: true });
});

afterEach(() => root.remove());

/** What `npm install` leaves of a server that toolhost reads to find its bin: its manifest and the bin. */
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
  it('wraps each stdio server with its grants, keeping npx entries as written, and leaves the remote one to the client', async () => {
    const run = await wrap([
      'claude_desktop_config.json',
      '--write',
      'filesystem=notes/inbox',
      '--write',
      'memory=memory',
    ]);
    const servers = join(example, 'servers.json');
    expect(run.lines).toEqual([
      `wrap: filesystem: sandboxed: npx -y @modelcontextprotocol/server-filesystem ${example}/notes; reads ${example}/notes; writes ${example}/notes/inbox; tools offered as filesystem_<name>`,
      `wrap: memory: sandboxed: npx -y @modelcontextprotocol/server-memory; reads nothing of yours; writes ${example}/memory; tools offered as memory_<name>`,
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
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', `${example}/notes`],
          toolhost: { prefix: 'filesystem', read: [`${example}/notes`], write: [`${example}/notes/inbox`] },
        },
        memory: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-memory'],
          env: { MEMORY_FILE_PATH: `${example}/memory/graph.jsonl` },
          toolhost: { prefix: 'memory', write: [`${example}/memory`] },
        },
      },
    });
  });

  it('`toolhost mcp-config` on the wrapped file runs the installed npx server and names what to install for the other', async () => {
    const filesystem = await install('@modelcontextprotocol/server-filesystem');
    expect((await wrap(['claude_desktop_config.json'])).code).toBe(0);
    const shown = await runCli(['mcp-config', 'servers.json'], { tmpDir: root.path, cwd: example });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stderr).toContain(`  filesystem: node ${filesystem} ${example}/notes\n`);
    expect(shown.stderr).toContain(
      `  memory: left out: memory: npx would fetch @modelcontextprotocol/server-memory at each start, and a sandboxed server has no network; it is not installed where Node resolves it from the config's folder: run npm install @modelcontextprotocol/server-memory in ${example}`,
    );
  });

  it('keeps the grants and prefix an entry already names', async () => {
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

describe('examples/wrap-mcp-config: the wrapped servers, run by toolhost in the process tier', () => {
  it.skipIf(!sandbox.available)(
    'offers both servers tools, reads and writes inside the grants, and refuses a write outside them',
    async () => {
      // The servers, installed beside the config with everything they depend on, as npm would.
      example = await layOutExample('wrap-mcp-config', join(root.path, 'installed'));
      const wrapped = await wrap([
        'claude_desktop_config.json',
        '--write',
        'filesystem=notes/inbox',
        '--write',
        'memory=memory',
      ]);
      expect(wrapped.code, wrapped.lines.join('\n')).toBe(0);
      const toolhost = (args: readonly string[]) =>
        runCli([args[0] ?? '', '--isolation', 'process', ...args.slice(1)], {
          tmpDir: root.path,
          cwd: example,
        });

      const listed = await toolhost(['list', '--json', 'servers.json']);
      expect(listed.code, listed.stderr).toBe(0);
      const names = (
        JSON.parse(listed.stdout) as { sources: Array<{ tools: Array<{ name: string }> }> }
      ).sources.flatMap((source) => source.tools.map((tool) => tool.name));
      expect(names).toEqual(
        expect.arrayContaining([
          'filesystem_read_text_file',
          'filesystem_write_file',
          'memory_create_entities',
        ]),
      );

      const read = await toolhost([
        'call',
        'servers.json',
        'filesystem_read_text_file',
        JSON.stringify({ path: join(example, 'notes/todo.md') }),
      ]);
      expect(read.stdout).toContain('- wrap the MCP config');
      expect(read.code).toBe(0);

      const inside = join(example, 'notes/inbox/from-the-model.md');
      const wrote = await toolhost([
        'call',
        'servers.json',
        'filesystem_write_file',
        JSON.stringify({ path: inside, content: 'hello' }),
      ]);
      expect(wrote.code, wrote.stderr).toBe(0);
      expect(await readFile(inside, 'utf8')).toBe('hello');

      // server-filesystem allows all of notes/; the sandbox allows only notes/inbox.
      const outside = await toolhost([
        'call',
        'servers.json',
        'filesystem_write_file',
        JSON.stringify({ path: join(example, 'notes/todo.md'), content: 'overwritten' }),
      ]);
      expect(outside.code).toBe(1);
      expect(outside.stderr).toMatch(
        /^toolhost: the tool "filesystem_write_file" failed: \w+: EROFS: read-only file system/,
      );
      expect(await readFile(join(example, 'notes/todo.md'), 'utf8')).toBe(
        '# Todo\n\n- wrap the MCP config\n',
      );

      const remembered = await toolhost([
        'call',
        'servers.json',
        'memory_create_entities',
        JSON.stringify({ entities: [{ name: 'Oslo', entityType: 'city', observations: ['cold'] }] }),
      ]);
      expect(remembered.code, remembered.stderr).toBe(0);
      expect(await readFile(join(example, 'memory/graph.jsonl'), 'utf8')).toContain('"name":"Oslo"');
    },
    // Copying the servers' ~100 packages and five commands, each starting a sandboxed server.
    180_000,
  );
});
