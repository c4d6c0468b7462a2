/**
 * The default tier: a host or a command that names none runs the strongest tier this machine has,
 * the process tier: in bubblewrap where it works, else under Node's permission model (here:
 * bubblewrap hidden from a child process's PATH). `host.status()` says which tier each package
 * got; the CLI says it once on stderr, and stdout (`--json`) stays clean.
 */
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { PERMISSION_MODEL_USABLE } from '../dist/src/calls/isolation.js';
import { outcomeText, type ToolOutcome } from '../dist/src/index.js';
import { freshDir, runCli, stderrLines } from './support/cli-run.js';
import { useHosts } from './support/host-harness.js';
import { exited, RecordingStdioTransport } from './support/mcp-serve.js';

const PACKAGE = fileURLToPath(new URL('../fixtures/process/default-tier', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./support/hosts/default-tier.mjs', import.meta.url));
const HAS_BWRAP = (() => {
  try {
    execFileSync('/bin/sh', ['-c', 'command -v bwrap'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const NO_SANDBOX_NOTICE = 'process isolation here runs without an OS sandbox';
const tmp = freshDir('toolhost-default-tier');
afterAll(() => tmp.remove());

interface Report {
  hostPid: number;
  statuses: Array<{ isolation?: string; state: string }>;
  outcome: ToolOutcome;
  lines: string[];
}

/** The host script in a child process whose PATH is `path`. */
function hostWithPath(path: string, dataDir: string): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [SCRIPT, PACKAGE, dataDir],
      { env: { PATH: path, TMPDIR: tmp.path }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as Report);
      },
    );
  });
}

function where(outcome: ToolOutcome): { pid: number; permissionModel: boolean } {
  return JSON.parse(outcomeText(outcome)) as { pid: number; permissionModel: boolean };
}

describe('a host that names no tier', () => {
  it('runs each package in a process of its own in bubblewrap, and status() says process', async ({
    skip,
  }) => {
    skip(!HAS_BWRAP, 'bubblewrap is not installed here');
    const report = await hostWithPath(process.env['PATH'] ?? '', `${tmp.path}/data-sandboxed`);
    expect(report.statuses).toEqual([expect.objectContaining({ isolation: 'process', state: 'offered' })]);
    const ran = where(report.outcome);
    expect(ran.pid).not.toBe(report.hostPid);
    // In the sandbox its workers get the worker tier's flags: the OS holds them, not Node.
    expect(ran.permissionModel).toBe(false);
    expect(report.lines.filter((line) => line.includes(NO_SANDBOX_NOTICE))).toEqual([]);
  });

  it('without bubblewrap runs the process tier under the permission model, and says what it lacks once', async () => {
    const report = await hostWithPath('', `${tmp.path}/data-unsandboxed`);
    expect(report.statuses).toEqual([expect.objectContaining({ isolation: 'process', state: 'offered' })]);
    const ran = where(report.outcome);
    expect(ran.pid).not.toBe(report.hostPid);
    expect(ran.permissionModel).toBe(PERMISSION_MODEL_USABLE);
    expect(report.lines.filter((line) => line.includes(NO_SANDBOX_NOTICE))).toHaveLength(1);
  });
});

describe('a tier named by the host or by load', () => {
  const makeHost = useHosts();

  it('is the one status() shows for that package', async () => {
    const { host } = await makeHost({ isolation: 'worker' });
    await host.load(PACKAGE);
    expect(host.status().map((status) => status.isolation)).toEqual(['worker']);
    expect(where(await host.call('where_it_runs', {})).pid).toBe(process.pid);

    await host.load(PACKAGE, { isolation: 'strict' });
    expect(host.status().map((status) => status.isolation)).toEqual(['strict']);
    expect(where(await host.call('where_it_runs', {})).permissionModel).toBe(true);
  });
});

const expectedLine = HAS_BWRAP
  ? 'toolhost: isolation: process, the strongest here: a process per package, in a bubblewrap sandbox; --isolation worker or strict runs trusted tools faster'
  : expect.stringMatching(/^toolhost: isolation: process, the strongest here: a process per package, /);

describe('a command that names no tier', () => {
  it('says the tier once on stderr, and --json on stdout stays one JSON document', async () => {
    const result = await runCli(['list', '--json', PACKAGE], { tmpDir: tmp.path, isolation: 'default' });
    expect(result.code).toBe(0);
    expect(stderrLines(result)).toEqual([expectedLine]);
    const listed = JSON.parse(result.stdout) as { sources: Array<{ offered: unknown[] }> };
    expect(listed.sources).toHaveLength(1);
  });

  it('calls in that tier: a package process of its own', async () => {
    const result = await runCli(['call', PACKAGE, 'where_it_runs'], {
      tmpDir: tmp.path,
      isolation: 'default',
    });
    expect(result.code).toBe(0);
    expect(stderrLines(result)).toEqual([expectedLine]);
    expect(JSON.parse(result.stdout)).toEqual({
      pid: expect.any(Number),
      permissionModel: !HAS_BWRAP && PERMISSION_MODEL_USABLE,
    });
  });

  it('without bubblewrap on PATH names the permission model and points at toolhost doctor', async () => {
    const result = await runCli(['list', PACKAGE], {
      tmpDir: tmp.path,
      isolation: 'default',
      env: { PATH: '' },
    });
    expect(result.code).toBe(0);
    const lines = stderrLines(result);
    expect(lines[0]).toBe(
      PERMISSION_MODEL_USABLE
        ? "toolhost: isolation: process, the strongest here: a process per package, under Node's permission model with strict's grants (no bubblewrap sandbox here: toolhost doctor says why); --isolation worker or strict runs trusted tools faster"
        : 'toolhost: isolation: process, the strongest here: a process per package, not confined (toolhost doctor says what is missing); --isolation worker or strict runs trusted tools faster',
    );
    expect(lines.filter((line) => line.includes(NO_SANDBOX_NOTICE))).toHaveLength(1);
  });

  it('with --isolation says nothing about the tier', async () => {
    const result = await runCli(['list', '--isolation', 'worker', PACKAGE], { tmpDir: tmp.path });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });
});

describe('toolhost serve over stdio that names no tier', () => {
  it('says the tier on stderr, never on the MCP channel, and its calls run in a package process', async () => {
    const transport = new RecordingStdioTransport([PACKAGE], tmp.path, { isolation: 'default' });
    const client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
    try {
      await client.connect(transport);
      const result = await client.callTool({ name: 'where_it_runs', arguments: {} });
      const [block] = result.content as Array<{ type: string; text: string }>;
      expect(JSON.parse(block?.text ?? '')).toEqual({
        pid: expect.any(Number),
        permissionModel: !HAS_BWRAP && PERMISSION_MODEL_USABLE,
      });
      const tierLines = transport.stderr.text
        .split('\n')
        .filter((line) => line.startsWith('toolhost: isolation: '));
      expect(tierLines).toEqual([HAS_BWRAP ? expectedLine : expect.any(String)]);
      const stdout = Buffer.concat(transport.stdoutChunks).toString('utf8');
      expect(stdout).not.toContain('isolation');
      for (const line of stdout.split('\n').filter((text) => text !== '')) {
        expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
      }
    } finally {
      await client.close();
      await exited(transport.child);
    }
  });
});
