/**
 * Entries that fetch their server at start (`npx -y <pkg>`, `npm exec`, `pnpm dlx`, `bunx`; `uvx`,
 * `uv tool run`, `pipx run`), as a config is read: an installed Node package, found from the
 * config's folder as Node finds it, becomes `node <its bin>`; anything else is left out with a
 * one-line reason that says what to do. No process is started here.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConfiguredServer, parseServersConfig } from '../dist/src/mcp/servers/config.js';
import { satisfiesRange } from '../dist/src/mcp/servers/version-range.js';
import { freshDir, REPO } from './support/cli-run.js';

const SCOPE = join(REPO, 'node_modules/@modelcontextprotocol');
const FILESYSTEM_BIN = realpathSync(join(SCOPE, 'server-filesystem/dist/index.js'));
const MEMORY_BIN = realpathSync(join(SCOPE, 'server-memory/dist/index.js'));

let work: ReturnType<typeof freshDir>;
let project: string;

/** A package in the project's node_modules: its manifest, and an empty file per listed file. */
function fakePackage(name: string, manifest: Record<string, unknown>, files: string[]): void {
  const folder = join(project, 'node_modules', name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }));
  for (const file of files) writeFileSync(join(folder, file), '#!/usr/bin/env node\n');
}

beforeAll(() => {
  work = freshDir('mcp-npx-config');
  // The project: the real servers' scope linked into its node_modules, and packages of its own.
  project = join(work.path, 'project');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  mkdirSync(join(project, 'nested/deeper'), { recursive: true });
  mkdirSync(join(work.path, 'elsewhere'));
  symlinkSync(SCOPE, join(project, 'node_modules/@modelcontextprotocol'));
  fakePackage('string-bin', { bin: 'cli.js' }, ['cli.js']);
  fakePackage('several-bins', { bin: { one: 'one.js', two: 'two.js' } }, ['one.js', 'two.js']);
  fakePackage('named-bin', { bin: { helper: 'helper.js', 'named-bin': 'main.js' } }, [
    'helper.js',
    'main.js',
  ]);
  fakePackage('no-bin', {}, []);
  fakePackage('escaping-bin', { bin: '../string-bin/cli.js' }, []);
  fakePackage('missing-bin', { bin: 'gone.js' }, []);
  fakePackage('unversioned', { version: { not: 'a version' }, bin: 'cli.js' }, ['cli.js']);
});
afterAll(() => work?.remove());

async function parseIn(
  folder: string,
  servers: Record<string, unknown>,
): Promise<Map<string, ConfiguredServer>> {
  const parsed = await parseServersConfig({ mcpServers: servers }, join(folder, 'servers.json'));
  return new Map(parsed.map((server) => [server.ok ? server.entry.name : server.name, server]));
}
const runs = (server: ConfiguredServer | undefined) =>
  server?.ok ? { command: server.entry.command, args: server.entry.args } : server;
const reasonOf = (server: ConfiguredServer | undefined) => (server?.ok === false ? server : undefined);

describe('an npx entry naming an installed package', () => {
  it('runs its installed bin with node, by its real path, its arguments resolved against the config folder', async () => {
    const servers = await parseIn(project, {
      fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', './data', '--x'] },
      yes: { command: 'npx', args: ['--yes', '--', '@modelcontextprotocol/server-memory@2026.8.31'] },
      exact: { command: '/usr/local/bin/npx', args: ['@modelcontextprotocol/server-memory@^2026.1.0 || 1'] },
      latest: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@latest'] },
      after: { command: 'npx', args: ['-y', 'string-bin', '--', '-y'] },
      npmExec: { command: 'npm', args: ['exec', '-y', '--', 'string-bin', '--flag'] },
      npmX: { command: 'npm', args: ['x', '--yes', 'string-bin', 'plain', '--', '--flag'] },
      pnpm: { command: 'pnpm', args: ['dlx', '--package=named-bin', 'helper', 'a'] },
      bunx: { command: 'bunx', args: ['-p', 'several-bins', 'two'] },
      bunX: { command: 'bun', args: ['x', 'named-bin'] },
    });
    expect(runs(servers.get('fs'))).toEqual({
      command: 'node',
      args: [FILESYSTEM_BIN, join(project, 'data'), '--x'],
    });
    for (const name of ['yes', 'exact', 'latest']) {
      expect(runs(servers.get(name))).toEqual({ command: 'node', args: [MEMORY_BIN] });
    }
    const own = (name: string, file: string) => join(project, 'node_modules', name, file);
    // npx passes everything after the package through; npm exec reads flags until --.
    expect(runs(servers.get('after'))).toEqual({
      command: 'node',
      args: [own('string-bin', 'cli.js'), '--', '-y'],
    });
    expect(runs(servers.get('npmExec'))).toEqual({
      command: 'node',
      args: [own('string-bin', 'cli.js'), '--flag'],
    });
    expect(runs(servers.get('npmX'))).toEqual({
      command: 'node',
      args: [own('string-bin', 'cli.js'), 'plain', '--flag'],
    });
    expect(runs(servers.get('pnpm'))).toEqual({
      command: 'node',
      args: [own('named-bin', 'helper.js'), 'a'],
    });
    expect(runs(servers.get('bunx'))).toEqual({ command: 'node', args: [own('several-bins', 'two.js')] });
    // Several bins: the one named like the package, as npx picks it.
    expect(runs(servers.get('bunX'))).toEqual({ command: 'node', args: [own('named-bin', 'main.js')] });
  });

  it("resolves the package from the config's folder up, never from the working directory", async () => {
    const entry = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] };
    const nested = await parseIn(join(project, 'nested/deeper'), { memory: entry });
    expect(runs(nested.get('memory'))).toEqual({ command: 'node', args: [MEMORY_BIN] });
    // The test runs in the repository, whose node_modules has it: the config's folder has none.
    const elsewhere = await parseIn(join(work.path, 'elsewhere'), { memory: entry });
    const folder = join(work.path, 'elsewhere');
    expect(reasonOf(elsewhere.get('memory'))).toEqual({
      ok: false,
      name: 'memory',
      code: 'SERVER_UNSUPPORTED',
      reason: `memory: npx would fetch @modelcontextprotocol/server-memory at each start, and a sandboxed server has no network; it is not installed where Node resolves it from the config's folder: run npm install @modelcontextprotocol/server-memory in ${folder} (or npm install --prefix ${folder} @modelcontextprotocol/server-memory), then load the config again`,
    });
  });
});

describe('a fetching entry that is left out', () => {
  it('gives each its one-line reason, and the other entries of the config are read', async () => {
    const servers = await parseIn(project, {
      missing: { command: 'npx', args: ['-y', '@example/not-installed@1.2.3', '/data'] },
      old: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@^2025.1.0'] },
      tag: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory@next'] },
      uvx: { command: 'uvx', args: ['mcp-server-fetch'] },
      uvTool: { command: 'uv', args: ['tool', 'run', '--from', 'x', 'mcp-server-git'] },
      pipx: { command: 'pipx', args: ['run', 'mcp-server-time'] },
      flag: { command: 'npx', args: ['--registry', 'https://registry.example', 'string-bin'] },
      bunFlag: { command: 'bunx', args: ['--bun', 'string-bin'] },
      npmFlag: { command: 'npm', args: ['exec', 'string-bin', '--flag'] },
      empty: { command: 'npx', args: ['-y'] },
      twoPackages: { command: 'npx', args: ['-p', 'string-bin', '-p', 'named-bin', 'helper'] },
      noValue: { command: 'npx', args: ['--package'] },
      path: { command: 'npx', args: ['-y', './local-server'] },
      git: { command: 'npx', args: ['-y', 'github:someone/server'] },
      several: { command: 'npx', args: ['several-bins'] },
      unknownBin: { command: 'npx', args: ['-p', 'string-bin', 'other'] },
      noBin: { command: 'npx', args: ['no-bin'] },
      escaping: { command: 'npx', args: ['escaping-bin'] },
      missingBin: { command: 'npx', args: ['missing-bin'] },
      unversioned: { command: 'npx', args: ['unversioned@1'] },
      hiddenFlag: { command: 'npx', args: ['--x\n\u202Ey', 'string-bin'] },
      good: { command: 'node', args: ['./server.js'] },
    });
    const reason = (name: string) => {
      const server = reasonOf(servers.get(name));
      expect(server?.reason, name).not.toContain('\n');
      return `${server?.code} ${server?.reason}`;
    };
    expect(reason('missing')).toContain(
      `SERVER_UNSUPPORTED missing: npx would fetch @example/not-installed at each start, and a sandboxed server has no network; it is not installed where Node resolves it from the config's folder: run npm install @example/not-installed@1.2.3 in ${project} (or npm install --prefix ${project} @example/not-installed@1.2.3)`,
    );
    expect(reason('old')).toBe(
      `SERVER_UNSUPPORTED old: npx asks for @modelcontextprotocol/server-memory@^2025.1.0, and @modelcontextprotocol/server-memory@2026.8.31 is installed in ${join(project, 'node_modules/@modelcontextprotocol/server-memory')}: run npm install @modelcontextprotocol/server-memory@^2025.1.0 in ${project} (or npm install --prefix ${project} @modelcontextprotocol/server-memory@^2025.1.0), then load the config again`,
    );
    expect(reason('tag')).toMatch(
      /^SERVER_UNSUPPORTED tag: npx asks for .*@next, which toolhost can't check .*dist-tag/,
    );
    expect(reason('uvx')).toBe(
      'SERVER_UNSUPPORTED uvx: uvx fetches mcp-server-fetch at each start, and a sandboxed server has no network: install it (uv tool install mcp-server-fetch, or pipx install mcp-server-fetch) and point "command" at the installed program',
    );
    expect(reason('uvTool')).toMatch(/^SERVER_UNSUPPORTED uvTool: uv tool run fetches x at each start/);
    expect(reason('pipx')).toMatch(
      /^SERVER_UNSUPPORTED pipx: pipx run fetches mcp-server-time at each start/,
    );
    expect(reason('flag')).toBe(
      'DECLARATION_INVALID flag: npx is given the flag "--registry", which toolhost does not read (it reads -y, --yes, -q, --quiet, --silent, -p, --package and --): remove it, or install the server and point "command" at it',
    );
    expect(reason('bunFlag')).toContain('bunx is given the flag "--bun"');
    expect(reason('npmFlag')).toContain(
      `npm exec reads "--flag" as its own flag: put the server's arguments after --`,
    );
    expect(reason('empty')).toBe('DECLARATION_INVALID empty: npx names no package to run');
    expect(reason('twoPackages')).toContain('npx names 2 packages: toolhost runs one');
    expect(reason('noValue')).toContain('npx --package names no package');
    expect(reason('path')).toContain('which is not a package of the npm registry');
    expect(reason('git')).toContain('"github:someone/server", which is not a package of the npm registry');
    expect(reason('several')).toContain(
      'several-bins@1.0.0 has several bins (one, two) and none named several-bins: name one, as npx -p several-bins <bin>',
    );
    expect(reason('unknownBin')).toContain(
      'string-bin@1.0.0 has no bin named "other" (its bins: string-bin)',
    );
    expect(reason('noBin')).toContain('no-bin@1.0.0 has no bin to run');
    expect(reason('escaping')).toContain("escaping-bin@1.0.0's bin ../string-bin/cli.js is not a file in");
    expect(reason('missingBin')).toContain("missing-bin@1.0.0's bin gone.js is not a file in");
    expect(reason('unversioned')).toContain(
      `npx asks for unversioned@1, and the copy installed in ${join(project, 'node_modules/unversioned')} has no version toolhost can read ("")`,
    );
    // A flag's control and invisible characters are shown, never obeyed by a terminal.
    expect(reason('hiddenFlag')).toContain('npx is given the flag "--x\\n\\u{202E}y"');
    expect(servers.get('good')?.ok).toBe(true);
  });
});

describe('version ranges, as npm reads them', () => {
  it.each([
    ['1.2.3', '1.2.3', true],
    ['1.2.3', '=1.2.3', true],
    ['1.2.4', '1.2.3', false],
    ['1.2.3', '^1.2.0', true],
    ['2.0.0', '^1.2.0', false],
    ['0.2.5', '^0.2.3', true],
    ['0.3.0', '^0.2.3', false],
    ['0.0.4', '^0.0.3', false],
    ['1.2.9', '~1.2.3', true],
    ['1.3.0', '~1.2.3', false],
    ['1.9.0', '~1', true],
    ['1.5.0', '1.x', true],
    ['2.0.0', '1.x', false],
    ['1.2.7', '1.2', true],
    ['3.0.0', '*', true],
    ['1.5.0', '>=1.2.3 <2', true],
    ['2.0.0', '>=1.2.3 <2', false],
    ['1.2.0', '>1.1', true],
    ['1.1.9', '>1.1', false],
    ['1.1.9', '<=1.1', true],
    ['2.3.9', '1.2.3 - 2.3', true],
    ['2.4.0', '1.2.3 - 2.3', false],
    ['5.0.0', '<1 || >=5', true],
    ['3.0.0', '<1 || >=5', false],
    ['2.0.0-beta.2', '^1.0.0', false],
    ['1.2.4-beta.2', '^1.2.4-beta.1', true],
    ['1.2.5-beta.2', '^1.2.4-beta.1', false],
    ['2026.8.31', '^2026.1.0', true],
  ])('%s against %s is %s', (version, range, expected) => {
    expect(satisfiesRange(version, range)).toBe(expected);
  });

  it('reads a dist-tag, or nonsense, as no range at all', () => {
    for (const range of ['next', 'beta', '1.2.3.4', '>=', '^x.y', 'a'.repeat(300)]) {
      expect(satisfiesRange('1.2.3', range), range).toBeUndefined();
    }
  });
});
