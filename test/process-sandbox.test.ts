/**
 * The process tier's OS sandbox (bubblewrap, Linux): a package's process sees its snapshot, its tmp
 * folder, toolhost's own code and the system's programs and libraries, all read-only but the tmp
 * folder, in namespaces of its own. The strict tier's file and process attacks are run against it.
 * These tests need bubblewrap (`.ci/run` installs it) and skip, saying why, where it can't run;
 * process-no-sandbox.test.ts shows what holds without it.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const STRICT_HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const PROCESS_HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const HOST_SOURCE = fileURLToPath(new URL('../src/host/tool-host.ts', import.meta.url));
const { sandbox } = await processEnvironment();
const NO_SANDBOX = sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`;
const SECRET = 'sk-fake-secret-for-the-process-sandbox';

let root: string;
let host: ToolHost;

beforeEach(async ({ skip }) => {
  skip(!sandbox.available, NO_SANDBOX);
  root = await tempDir('toolhost-process-sandbox-');
  const logger = recordingLogger();
  host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'process', logger });
  for (const path of [STRICT_HOSTILE, PROCESS_HOSTILE]) {
    const report = await host.load(path);
    expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
  }
  // Nothing to say: this machine has the sandbox (and says so only when something is missing).
  expect(logger.lines.filter((line) => line.message.includes('process isolation'))).toEqual([]);
});

afterEach(async () => {
  await host?.close();
  if (root !== undefined) await removeDir(root);
});

async function expectNextCallWorks(): Promise<void> {
  const next = await host.call('strict_tmp_roundtrip', {});
  expect(outcomeText(next)).toBe('kept in tmpDir');
}

/** The error of a tool that reached for a path its sandbox does not hold. */
const notThere = (path: string) => ({
  code: 'TOOL_THREW',
  message: `ENOENT: no such file or directory, open '${path}'`,
});

describe("isolation: 'process' in bubblewrap: files", () => {
  it('a tool reads its own package and writes and reads back its tmpDir', async () => {
    expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
    await expectNextCallWorks();
  });

  it('a tool that reads a secrets file outside its package finds nothing there', async () => {
    const secrets = join(root, 'secrets.env');
    await writeFile(secrets, `API_TOKEN=${SECRET}\n`);
    const outcome = await host.call('strict_read_file', { path: secrets });
    expect(outcome.error).toMatchObject(notThere(secrets));
    await expectNextCallWorks();
  });

  it("a tool that reads the host's sources, or the package folder it was loaded from, finds nothing there", async () => {
    expect((await host.call('strict_read_file', { path: HOST_SOURCE })).error).toMatchObject(
      notThere(HOST_SOURCE),
    );
    const manifest = join(STRICT_HOSTILE, 'package.json');
    expect((await host.call('strict_read_file', { path: manifest })).error).toMatchObject(notThere(manifest));
  });

  it('a tool that reads /proc/<host pid>/environ finds no such process, and its own environment is empty', async () => {
    const hostEnviron = `/proc/${process.pid}/environ`;
    expect((await host.call('strict_read_file', { path: hostEnviron })).error).toMatchObject(
      notThere(hostEnviron),
    );
    const own = outcomeText(await host.call('strict_read_file', { path: '/proc/self/environ' }));
    expect(own.split('\0').filter((entry) => entry !== '' && !entry.startsWith('PWD='))).toEqual([]);
  });

  it('a tool that writes outside its tmpDir (or to a relative path) gets an error result and no file appears', async () => {
    for (const target of [
      join(root, 'written-by-tool.txt'),
      '/tmp/written-by-a-process-tool.txt',
      '/written.txt',
      // Relative: its working directory is the sandbox's read-only root, not the host's.
      'written-relative.txt',
    ]) {
      const outcome = await host.call('strict_write_file', { path: target, text: 'pwned' });
      expect(outcome.error?.code).toBe('TOOL_THREW');
      expect(outcome.error?.message).toMatch(
        /^(ENOENT: no such file or directory|EROFS: read-only file system)/,
      );
      expect(existsSync(target)).toBe(false);
    }
    expect(existsSync(join(process.cwd(), 'written-relative.txt'))).toBe(false);
    await expectNextCallWorks();
  });
});

describe("isolation: 'process' in bubblewrap: processes", () => {
  it('a tool sees only its own processes, null stdin and stdout, the stderr only the host reads, its channel, and no descriptor of the host', async () => {
    const seen = JSON.parse(outcomeText(await host.call('proc_whoami', {}))) as {
      pid: number;
      processes: number;
      fds: Record<string, { target: string; cloexec: boolean }>;
    };
    expect(seen.pid).not.toBe(process.pid);
    // bwrap's own init, the package's process, and what the tool's shell-free listing started: none.
    expect(seen.processes).toBeLessThanOrEqual(3);
    // Node marks its own descriptors close-on-exec; one inherited from the host's parents would not
    // be, and the package's process closes those before any tool runs.
    expect(Object.entries(seen.fds).filter(([, fd]) => !fd.cloexec)).toEqual([]);
    const target = (fd: string) => seen.fds[fd]?.target.replace(/^socket:.*/, 'socket');
    expect(['0', '1', '2', '3'].map(target)).toEqual(['/dev/null', '/dev/null', 'socket', 'socket']);
  });

  it("a tool that runs kill -9 on the host's pid reaches nothing, and the host lives on", async () => {
    const outcome = JSON.parse(outcomeText(await host.call('proc_kill_pid', { pid: process.pid })));
    expect(outcome.status).not.toBe(0);
    expect(outcome.output).toMatch(/No such process/);
    await expectNextCallWorks();
  });

  it('a tool that spawns a process gets one inside the sandbox, which can write nowhere outside it', async () => {
    const marker = join(root, 'spawned.txt');
    const outcome = await host.call('strict_spawn', { marker });
    expect(outcome.error?.code).toBe('TOOL_THREW');
    expect(existsSync(marker)).toBe(false);
    await expectNextCallWorks();
  });
});
