/**
 * A config as real clients write it (`"command": "npx", "args": ["-y", "<pkg>", …]`), run: the
 * real servers installed beside the config (server-filesystem and server-memory, linked into the
 * config folder's node_modules) answer in bubblewrap, the entries that can't run are left out with
 * their reasons while the others serve, and a lock pins what actually runs (node and the installed
 * bin), so an updated installed package is CODE_CHANGED.
 */
import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { parseLock } from '../dist/src/lock/lock-file.js';
import { freshDir, REPO, runCli } from './support/cli-run.js';
import { markedProcesses, writeConfig } from './support/mcp-server-configs.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const textOf = (outcome: { content: Array<{ type: string; text?: string }> }) =>
  outcome.content.map((block) => block.text ?? '').join('\n');

let work: ReturnType<typeof freshDir>;
let project: string;
let marker: string;
let lock: string;
let host: ToolHost;
const RUG_SERVER = 'node_modules/rug-server';

beforeAll(async () => {
  work = freshDir('mcp-npx');
  project = join(work.path, 'project');
  lock = join(project, 'toolhost.lock.json');
  for (const folder of ['node_modules', 'data', 'memory', RUG_SERVER])
    mkdirSync(join(project, folder), { recursive: true });
  writeFileSync(join(project, 'data/note.txt'), 'read through npx');
  // The real servers, installed beside the config as `npm install` would put them.
  symlinkSync(
    join(REPO, 'node_modules/@modelcontextprotocol'),
    join(project, 'node_modules/@modelcontextprotocol'),
  );
  // A package of our own (the rug-pull fixture with a bin), so updating it touches no shared file.
  cpSync(join(REPO, 'fixtures/mcp-servers/rug-pull/server.mjs'), join(project, RUG_SERVER, 'server.mjs'));
  writeFileSync(
    join(project, RUG_SERVER, 'package.json'),
    JSON.stringify({
      name: 'rug-server',
      version: '1.0.0',
      type: 'module',
      bin: { 'rug-server': 'server.mjs' },
    }),
  );
  ({ marker } = writeConfig(project, {
    fs: {
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', './data'],
      toolhost: { prefix: 'fs', read: ['./data'] },
    },
    memory: {
      command: 'npm',
      args: ['exec', '--yes', '--', '@modelcontextprotocol/server-memory@2026.8.31'],
      env: { MEMORY_FILE_PATH: join(project, 'memory/graph.jsonl') },
      toolhost: { prefix: 'mem', write: ['./memory'] },
    },
    rug: { command: 'npx', args: ['-y', 'rug-server@^1'], toolhost: { prefix: 'rug' } },
    missing: { command: 'npx', args: ['-y', '@example/not-installed-server'] },
    mismatched: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@2025.1.1'] },
    python: { command: 'uvx', args: ['mcp-server-fetch'] },
    flagged: { command: 'npx', args: ['--registry=https://registry.example', 'rug-server'] },
  }));
  host = new ToolHost({ logger: quiet });
  await host.load(join(project, 'servers.json'));
});

afterAll(async () => {
  await host?.close();
  work?.remove();
});

describe('npx entries of a real config', () => {
  it('serves the installed servers and leaves out the others, each with its reason', async () => {
    const names = host.list().map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['fs_read_text_file', 'mem_read_graph', 'rug_weather']));
    const leftOut = Object.fromEntries(
      host
        .status()
        .filter((status) => status.state === 'left-out')
        .map((status) => [
          status.path.slice(status.path.indexOf('#') + 1),
          `${status.code} ${status.reason}`,
        ]),
    );
    expect(Object.keys(leftOut).sort()).toEqual(['flagged', 'mismatched', 'missing', 'python']);
    expect(leftOut['missing']).toContain(
      `SERVER_UNSUPPORTED missing: npx would fetch @example/not-installed-server at each start, and a sandboxed server has no network; it is not installed where Node resolves it from the config's folder: run npm install @example/not-installed-server in ${project}`,
    );
    expect(leftOut['mismatched']).toContain(
      'npx asks for @modelcontextprotocol/server-memory@2025.1.1, and @modelcontextprotocol/server-memory@2026.8.31 is installed',
    );
    expect(leftOut['python']).toContain(
      'SERVER_UNSUPPORTED python: uvx fetches mcp-server-fetch at each start',
    );
    expect(leftOut['flagged']).toContain(
      'DECLARATION_INVALID flagged: npx is given the flag "--registry=https',
    );
  });

  it('runs them in their sandbox: a read in the grant, state across calls, a file in the write grant', async () => {
    expect(textOf(await host.call('fs_read_text_file', { path: join(project, 'data/note.txt') }))).toBe(
      'read through npx',
    );
    const created = await host.call('mem_create_entities', {
      entities: [{ name: 'npx', entityType: 'runner', observations: ['runs the installed copy'] }],
    });
    expect(created.isError).toBe(false);
    expect(textOf(await host.call('mem_read_graph', {}))).toContain('runs the installed copy');
    expect(readFileSync(join(project, 'memory/graph.jsonl'), 'utf8')).toContain('npx');
    expect(textOf(await host.call('rug_weather', { city: 'Oslo' }))).toBe('sunny in Oslo');
  });

  it('pins node and the installed bin; an updated installed package is CODE_CHANGED, the other servers stay', async () => {
    await host.pin({ lockFile: lock });
    const entries = parseLock(readFileSync(lock, 'utf8'), lock);
    const rug = entries.find((entry) => entry.module === 'servers.json#rug/weather')?.server;
    expect(basename(rug?.command ?? '')).toMatch(/^node/);
    expect(rug?.args).toEqual([`./${RUG_SERVER}/server.mjs`]);
    const fs = entries.find((entry) => entry.module === 'servers.json#fs/read_text_file')?.server;
    // Its node_modules links to the repository's: the real path is outside the config's folder.
    expect(fs?.args).toEqual([
      realpathSync(join(REPO, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js')),
      './data',
    ]);
    // The installed package updated in place (npm install rug-server@1.0.1).
    const server = join(project, RUG_SERVER, 'server.mjs');
    writeFileSync(server, `${readFileSync(server, 'utf8')}\n// 1.0.1\n`);
    const locked = new ToolHost({ logger: quiet, lockFile: lock });
    try {
      await locked.load(join(project, 'servers.json'));
      const weather = locked.status().find((status) => status.path.endsWith('#rug/weather'));
      expect(weather).toMatchObject({ state: 'left-out', code: 'CODE_CHANGED' });
      expect(weather?.difference?.map((change) => change.field)).toEqual(['server.files']);
      expect(locked.list().map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['fs_read_text_file', 'mem_read_graph']),
      );
      expect(textOf(await locked.call('fs_read_text_file', { path: join(project, 'data/note.txt') }))).toBe(
        'read through npx',
      );
    } finally {
      await locked.close();
    }
  });

  it('`toolhost mcp-config` names what each entry runs, or why it is left out', async () => {
    const tmp = freshDir('mcp-npx-cli');
    try {
      const result = await runCli(['mcp-config', 'servers.json'], { cwd: project, tmpDir: tmp.path });
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`  rug: node ${join(project, RUG_SERVER, 'server.mjs')}\n`);
      expect(result.stderr).toContain(
        '  python: left out: python: uvx fetches mcp-server-fetch at each start',
      );
    } finally {
      tmp.remove();
    }
  });

  it('ends every server process before close resolves', async () => {
    expect(markedProcesses(marker).length).toBeGreaterThan(0);
    await host.close();
    expect(markedProcesses(marker)).toEqual([]);
  });
});
