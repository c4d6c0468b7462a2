/**
 * MCP servers as a source: real servers (server-everything, server-filesystem, server-memory,
 * installed as pinned devDependencies) and a small wire-level server of our own
 * (fixtures/mcp-servers/line-server.mjs), run through `host.load(config)` in bubblewrap.
 */
import { mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModuleEvent, ToolHost } from '../dist/src/index.js';
import { freshDir, runCli } from './support/cli-run.js';
import { FakeClock } from './support/host-harness.js';
import { runHostProcess } from './support/host-process.js';
import { GOOD, startStdio } from './support/mcp-serve.js';
import {
  EVERYTHING,
  FILESYSTEM,
  LINE_SERVER,
  MEMORY,
  markedProcesses,
  writeConfig,
} from './support/mcp-server-configs.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const textOf = (outcome: { content: Array<{ type: string; text?: string }> }) =>
  outcome.content.map((block) => block.text ?? '').join('\n');

describe('server-everything and the wire-level server, in one host', () => {
  let work: ReturnType<typeof freshDir>;
  let host: ToolHost;
  let marker: string;
  let configPath: string;

  beforeAll(async () => {
    work = freshDir('mcp-servers');
    mkdirSync(join(work.path, 'shared'));
    process.env['TOOLHOST_TEST_ALLOWED'] = 'allowed-value';
    process.env['TOOLHOST_TEST_SECRET'] = 'secret-value';
    ({ path: configPath, marker } = writeConfig(work.path, {
      everything: {
        command: 'node',
        args: [EVERYTHING, 'stdio'],
        env: { GIVEN: 'given-value' },
        toolhost: { prefix: 'ev', allowEnv: ['TOOLHOST_TEST_ALLOWED'] },
      },
      line: {
        command: 'node',
        args: [LINE_SERVER],
        toolhost: { read: ['./shared'], timeoutMs: 2000 },
      },
      remote: { url: 'https://example.com/mcp' },
      broken: { args: ['x'] },
    }));
    host = new ToolHost({ logger: quiet });
    await host.load(configPath);
  });

  afterAll(async () => {
    await host?.close();
    delete process.env['TOOLHOST_TEST_ALLOWED'];
    delete process.env['TOOLHOST_TEST_SECRET'];
    work?.remove();
  });

  it('offers each server its tools (prefixed where asked) and leaves out remote and broken entries with their reasons', () => {
    const names = host.list().map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['ev_echo', 'ev_get-env', 'ev_get-tiny-image', 'echo', 'hang']),
    );
    const statuses = host.status();
    const remote = statuses.find((status) => status.path.endsWith('#remote'));
    expect(remote).toMatchObject({
      state: 'left-out',
      code: 'SERVER_UNSUPPORTED',
      reason: 'remote is a remote server (url): toolhost hosts stdio servers only',
    });
    const broken = statuses.find((status) => status.path.endsWith('#broken'));
    expect(broken).toMatchObject({ state: 'left-out', code: 'DECLARATION_INVALID' });
    expect(broken?.reason).toContain('has no "command"');
  });

  it('keeps title and annotations, and compiles a draft-07 inputSchema', async () => {
    const longRunning = host.list().find((tool) => tool.name === 'ev_trigger-long-running-operation');
    expect(longRunning?.title).toBe('Trigger Long Running Operation Tool');
    expect(longRunning?.annotations).toMatchObject({ readOnlyHint: true });
    const refused = await host.call('echo', { other: 1 });
    expect(refused.error?.code).toBe('INVALID_INPUT');
    expect(textOf(await host.call('echo', { text: 'draft-07' }))).toBe('draft-07');
  });

  it('relays echo, an image and progress events', async () => {
    expect(textOf(await host.call('ev_echo', { message: 'hello' }))).toBe('Echo: hello');
    const image = await host.call('ev_get-tiny-image', {});
    expect(image.isError).toBe(false);
    expect(image.content.some((block) => block.type === 'image')).toBe(true);
    const progress: unknown[] = [];
    const onProgress = (event: { data: unknown }) => progress.push(event.data);
    host.on('progress', onProgress);
    const done = await host.call('ev_trigger-long-running-operation', { duration: 0.3, steps: 3 });
    host.off('progress', onProgress);
    expect(textOf(done)).toContain('Long running operation completed');
    expect(progress).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });

  it("gives a server its entry's env and the allowEnv names only, HOME in its own tmp folder", async () => {
    const env = JSON.parse(textOf(await host.call('ev_get-env', {}))) as Record<string, string>;
    expect(env['GIVEN']).toBe('given-value');
    expect(env['TOOLHOST_TEST_ALLOWED']).toBe('allowed-value');
    expect(env['TOOLHOST_TEST_SECRET']).toBeUndefined();
    expect(env['HOME']).toBe(env['TMPDIR']);
    expect(env['HOME']).not.toBe(process.env['HOME']);
  });

  it("gives a call what the server logs while it runs as the call's output", async () => {
    const outputs: string[] = [];
    const outcome = await host.call(
      'log',
      {},
      { onOutput: (event) => outputs.push(...event.logs.map((log) => log.text)) },
    );
    expect(textOf(outcome)).toBe('logged');
    expect(outputs).toEqual(['[info] line: working\n']);
  });

  it('answers sampling and elicitation requests with an error that says toolhost does not offer them', async () => {
    const sampling = JSON.parse(textOf(await host.call('ask_sampling', {})));
    expect(sampling).toEqual({
      code: -32601,
      message:
        'toolhost does not offer sampling to MCP servers: a sandboxed server gets no access to a model',
    });
    const elicitation = JSON.parse(textOf(await host.call('ask_elicitation', {})));
    expect(elicitation.message).toContain('toolhost does not offer elicitation');
  });

  it('answers roots/list with the read and write grants', async () => {
    const roots = JSON.parse(textOf(await host.call('roots', {})));
    expect(roots.roots).toEqual([
      { uri: `file://${join(work.path, 'shared')}`, name: join(work.path, 'shared') },
    ]);
  });

  it('lets a server read its read grant and nothing else of the host', async () => {
    writeFileSync(join(work.path, 'shared', 'note.txt'), 'shared note');
    writeFileSync(join(work.path, 'secret.txt'), 'host secret');
    expect(textOf(await host.call('read_file', { path: join(work.path, 'shared', 'note.txt') }))).toBe(
      'shared note',
    );
    const secret = await host.call('read_file', { path: join(work.path, 'secret.txt') });
    expect(secret.isError).toBe(true);
    expect(textOf(secret)).toBe('ENOENT');
    expect(textOf(await host.call('read_file', { path: configPath }))).toBe('ENOENT');
  });

  it('answers a call whose server exits mid-call with TOOL_CRASHED and its stderr, and the next call runs after a restart', async () => {
    const before = textOf(await host.call('whoami', {}));
    const crashed = await host.call('crash', {});
    expect(crashed.error?.code).toBe('TOOL_CRASHED');
    expect(crashed.error?.message).toContain('exited with code 3 during the call');
    expect(crashed.error?.message).toContain('line-server: crashing on purpose');
    expect(textOf(await host.call('whoami', {}))).toBe(before);
    expect(textOf(await host.call('echo', { text: 'after' }))).toBe('after');
    expect(textOf(await host.call('ev_echo', { message: 'other server' }))).toBe('Echo: other server');
  });

  it('answers a malformed result TOOL_BAD_RESULT and a malformed reply at once, in one line each', async () => {
    const badResult = await host.call('bad_result', {});
    expect(badResult.error).toEqual({
      code: 'TOOL_BAD_RESULT',
      message: "the MCP server's result is malformed: its `content` is not a list",
    });
    const malformed = await host.call('malformed_reply', {});
    expect(malformed.error?.code).toBe('TOOL_BAD_RESULT');
    expect(malformed.error?.message).toContain(
      'the MCP server sent a malformed reply: not a JSON-RPC response',
    );
    expect(malformed.error?.message).not.toContain('\n');
    expect(textOf(await host.call('echo', { text: 'fine' }))).toBe('fine');
  });

  it("bounds progress and log notifications per call as a tool's are", async () => {
    let progress = 0;
    const onProgress = () => {
      progress += 1;
    };
    host.on('progress', onProgress);
    let lines = 0;
    const outcome = await host.call(
      'flood',
      {},
      {
        onOutput: (event) => {
          lines += event.logs.length;
        },
      },
    );
    host.off('progress', onProgress);
    expect(textOf(outcome)).toBe('flooded');
    expect(progress).toBe(1000);
    expect(lines).toBe(1000);
  });

  it('answers a reply over the line bound TOOL_BAD_RESULT at once, not at its timeout', async () => {
    // Answered by the reply itself: a call left to its deadline would be TOOL_TIMEOUT.
    const huge = await host.call('huge', {});
    expect(huge.error).toEqual({
      code: 'TOOL_BAD_RESULT',
      message: 'the MCP server sent a malformed reply: a reply over the 8 MiB bound',
    });
    expect(textOf(await host.call('echo', { text: 'next' }))).toBe('next');
  });

  it('answers a call over its timeout with TOOL_TIMEOUT, and the server takes the next call', async () => {
    const hung = await host.call('hang', {});
    expect(hung.error).toEqual({ code: 'TOOL_TIMEOUT', message: 'tool timed out after 2000 ms' });
    expect(textOf(await host.call('echo', { text: 'still here' }))).toBe('still here');
  });

  it('reads the tools again on list_changed and publishes the new tool', async () => {
    const offered = new Promise<ModuleEvent>((resolve) => {
      const listen = (event: ModuleEvent) => {
        if (event.status.name !== 'late' || event.type !== 'offered') return;
        host.off('module', listen);
        resolve(event);
      };
      host.on('module', listen);
    });
    expect(textOf(await host.call('change_tools', {}))).toBe('changed');
    await offered;
    expect(host.list().map((tool) => tool.name)).toContain('late');
    expect(host.list().map((tool) => tool.name)).toContain('ev_echo');
  });

  it('ends every server process on unload', async () => {
    expect(markedProcesses(marker).length).toBeGreaterThan(0);
    const gone = new Promise<void>((resolve) => {
      const listen = (event: ModuleEvent) => {
        if (event.type !== 'removed' || host.list().length > 0) return;
        host.off('module', listen);
        resolve();
      };
      host.on('module', listen);
    });
    expect(host.unload(configPath)).toBe(true);
    await gone;
    await expect.poll(() => markedProcesses(marker), { timeout: 10_000 }).toEqual([]);
  });
});

describe('server-filesystem and server-memory', () => {
  let work: ReturnType<typeof freshDir>;
  let host: ToolHost;
  let marker: string;

  beforeAll(async () => {
    work = freshDir('mcp-servers-fs');
    for (const folder of ['files', 'files/granted', 'files/other', 'memory'])
      mkdirSync(join(work.path, folder));
    writeFileSync(join(work.path, 'files/granted/in.txt'), 'inside the grant');
    writeFileSync(join(work.path, 'files/other/out.txt'), 'outside the grant');
    ({ marker } = writeConfig(work.path, {
      // The server is told it may use all of files/; the sandbox grants it files/granted only.
      fs: {
        command: 'node',
        args: [FILESYSTEM, './files'],
        toolhost: { prefix: 'fs', read: ['./files'], write: ['./files/granted'] },
      },
      memory: {
        command: 'node',
        args: [MEMORY],
        env: { MEMORY_FILE_PATH: join(work.path, 'memory/graph.jsonl') },
        toolhost: { prefix: 'mem', write: ['./memory'] },
      },
    }));
    // A narrower read grant than the server's argument: files/ readable, only files/granted writable.
    host = new ToolHost({ logger: quiet });
    await host.load(join(work.path, 'servers.json'));
  });

  afterAll(async () => {
    await host?.close();
    work?.remove();
  });

  it('reads and writes inside its grants', async () => {
    expect(
      textOf(await host.call('fs_read_text_file', { path: join(work.path, 'files/granted/in.txt') })),
    ).toBe('inside the grant');
    const written = await host.call('fs_write_file', {
      path: join(work.path, 'files/granted/new.txt'),
      content: 'new',
    });
    expect(written.isError).toBe(false);
    expect(readFileSync(join(work.path, 'files/granted/new.txt'), 'utf8')).toBe('new');
  });

  it('is refused by the sandbox a write the server itself would allow', async () => {
    const refused = await host.call('fs_write_file', {
      path: join(work.path, 'files/other/new.txt'),
      content: 'x',
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/read-only file system|EROFS/i);
    expect(() => readFileSync(join(work.path, 'files/other/new.txt'))).toThrow();
  });

  it('keeps server-memory state across calls, its file inside its write grant', async () => {
    const created = await host.call('mem_create_entities', {
      entities: [{ name: 'toolhost', entityType: 'project', observations: ['hosts MCP servers'] }],
    });
    expect(created.isError).toBe(false);
    const graph = await host.call('mem_read_graph', {});
    expect(textOf(graph)).toContain('hosts MCP servers');
    expect(readFileSync(join(work.path, 'memory/graph.jsonl'), 'utf8')).toContain('toolhost');
  });

  it('ends every server process (and what it started) before close resolves', async () => {
    expect(markedProcesses(marker).length).toBeGreaterThan(0);
    await host.close();
    expect(markedProcesses(marker)).toEqual([]);
  });
});

describe('a config through the CLI, and a machine without bubblewrap', () => {
  let work: ReturnType<typeof freshDir>;
  let tmp: ReturnType<typeof freshDir>;

  beforeAll(() => {
    work = freshDir('mcp-servers-cli');
    tmp = freshDir('mcp-servers-cli-tmp');
    writeConfig(work.path, {
      line: { command: process.execPath, args: [LINE_SERVER] },
      remote: { url: 'https://example.com/mcp' },
    });
  });

  afterAll(() => {
    work?.remove();
    tmp?.remove();
  });

  it('`toolhost list servers.json` shows each server tool and the remote entry left out', async () => {
    const result = await runCli(['list', 'servers.json'], { cwd: work.path, tmpDir: tmp.path });
    // Something left out: list exits 1, as it does for a package's module.
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('✓ echo(text)');
    expect(result.stdout).toContain('remote is a remote server (url): toolhost hosts stdio servers only');
    expect(result.stdout).toContain('14 tools offered, 1 left out');
  });

  it('`toolhost call servers.json echo` relays the call', async () => {
    const result = await runCli(['call', 'servers.json', 'echo', '{"text":"from the cli"}'], {
      cwd: work.path,
      tmpDir: tmp.path,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('from the cli\n');
    expect(result.code).toBe(0);
  });

  it("`toolhost serve servers.json <package>` serves the servers' tools beside the package's to an MCP client, and ends them when the client leaves", async () => {
    const { marker } = writeConfig(
      work.path,
      { line: { command: process.execPath, args: [LINE_SERVER] } },
      { file: 'serve.json' },
    );
    const served = await startStdio([join(work.path, 'serve.json'), GOOD], tmp.path);
    const { tools } = await served.client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'roots', 'say', 'count_up']));
    const result = await served.client.callTool({ name: 'echo', arguments: { text: 'over serve' } });
    expect(result.content).toEqual([{ type: 'text', text: 'over serve' }]);
    expect(served.clientErrors).toEqual([]);
    expect(markedProcesses(marker).length).toBeGreaterThan(0);
    await served.client.close();
    await expect.poll(() => markedProcesses(marker), { timeout: 20_000 }).toEqual([]);
  });

  it('`pin servers.json` pins each server tool with what its server runs, and `list --lock` offers them', async () => {
    const lock = join(tmp.path, 'toolhost.lock.json');
    const pinned = await runCli(['pin', 'servers.json', '--lock', lock], {
      cwd: work.path,
      tmpDir: tmp.path,
    });
    expect(pinned.stdout).toMatch(/\+ echo {2}\S*servers\.json#line\/echo {2}pinned/);
    // The remote entry was never read: it is left out, so not pinned.
    expect(pinned.code).toBe(1);
    const entry = (
      JSON.parse(readFileSync(lock, 'utf8')) as { tools: Array<Record<string, unknown>> }
    ).tools.find((tool) => tool['tool'] === 'echo');
    expect(entry?.['package']).toBe(null);
    expect(entry?.['server']).toMatchObject({
      name: 'line',
      command: realpathSync(process.execPath),
      args: [LINE_SERVER],
      grants: { read: [], write: [], net: false, allowEnv: [], prefix: null, timeoutMs: null },
    });
    const listed = await runCli(['list', 'servers.json', '--lock', lock], {
      cwd: work.path,
      tmpDir: tmp.path,
    });
    expect(listed.stdout).toMatch(/\d+ tools offered/);
    expect(listed.stdout).not.toContain('NOT_PINNED');
    expect(listed.stdout).toContain('echo');
  });

  it('leaves a server out, naming bubblewrap and how to install it, where bwrap is not on the PATH', async () => {
    // A PATH with node on it and no bwrap.
    const bin = join(tmp.path, 'bin-without-bwrap');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    const run = await runHostProcess({
      // No place of the worker budget for a server: the reason is still bubblewrap, not maxWorkers.
      options: { maxWorkers: 1 },
      packages: [join(work.path, 'servers.json')],
      calls: [{ name: 'echo', args: { text: 'x' } }],
      env: { PATH: bin },
      statusAfterLoad: true,
    });
    expect(run.code).toBe(0);
    const status = JSON.parse(/^STATUS (.*)$/m.exec(run.stdout)?.[1] ?? '[]') as Array<
      Record<string, string>
    >;
    const line = status.find((entry) => entry['path']?.endsWith('#line'));
    expect(line?.['code']).toBe('SERVER_UNSUPPORTED');
    expect(line?.['reason']).toContain('bubblewrap (bwrap) is not installed');
    expect(line?.['reason']).toContain('apt-get install bubblewrap');
    expect(run.stdout).toContain('"code":"UNKNOWN_TOOL"');
  });
});

describe('a server whose initialize runs over the read time bound', () => {
  it('is left out until its re-read, on the host clock, and offered once it answers', async () => {
    const work = freshDir('mcp-servers-slow');
    const clock = new FakeClock();
    const host = new ToolHost({ logger: quiet, readTimeoutMs: 1000, rereadDelaysMs: [60_000], clock });
    try {
      mkdirSync(join(work.path, 'switch'));
      const silent = join(work.path, 'switch/silent');
      writeFileSync(silent, '');
      const { path } = writeConfig(work.path, {
        slow: {
          command: 'node',
          args: [LINE_SERVER],
          env: { SILENT_WHILE: silent },
          toolhost: { read: ['./switch'] },
        },
      });
      await host.load(path);
      await clock.untilPending();
      const pending = host.status().find((status) => status.path.endsWith('#slow'));
      expect(pending).toMatchObject({
        state: 'reread-pending',
        code: 'DECLARATION_TIMEOUT',
        reason: 'it did not answer initialize within 1000 ms',
        nextRereadAt: clock.now() + 60_000,
      });
      const offered = new Promise<void>((resolve) => {
        const listen = (event: ModuleEvent) => {
          if (event.type !== 'offered' || event.status.name !== 'echo') return;
          host.off('module', listen);
          resolve();
        };
        host.on('module', listen);
      });
      rmSync(silent);
      clock.advance(60_000);
      await offered;
      expect(textOf(await host.call('echo', { text: 'at last' }))).toBe('at last');
    } finally {
      await host.close();
      work.remove();
    }
  });

  it('is published left out with its new reason when its re-read fails otherwise (it exits)', async () => {
    const work = freshDir('mcp-servers-slow-exits');
    const clock = new FakeClock();
    const host = new ToolHost({ logger: quiet, readTimeoutMs: 1000, rereadDelaysMs: [60_000], clock });
    try {
      // Never answers initialize at first; exits at once by its re-read.
      const script = join(work.path, 'server.mjs');
      writeFileSync(script, 'setInterval(() => {}, 60_000);\n');
      const { path } = writeConfig(work.path, { slow: { command: 'node', args: [script] } });
      await host.load(path);
      await clock.untilPending();
      expect(host.status().find((status) => status.path.endsWith('#slow'))).toMatchObject({
        state: 'reread-pending',
        code: 'DECLARATION_TIMEOUT',
      });
      const leftOut = new Promise<ModuleEvent>((resolve) => {
        const listen = (event: ModuleEvent) => {
          if (event.type !== 'left-out' || !event.status.path.endsWith('#slow')) return;
          host.off('module', listen);
          resolve(event);
        };
        host.on('module', listen);
      });
      writeFileSync(script, 'process.exit(3);\n');
      clock.advance(60_000);
      expect((await leftOut).status).toMatchObject({ state: 'left-out', code: 'SERVER_FAILED' });
      expect(host.status().find((status) => status.path.endsWith('#slow'))?.reason).toContain('code 3');
    } finally {
      await host.close();
      work.remove();
    }
  });
});
