/**
 * A package's process never has the host's stdio or any other descriptor of the host's: its stdout
 * and stderr are null devices, and a descriptor the host's own parent left open is closed before any
 * tool runs. Each test runs a host in a process of its own (test/support/process-host.mjs) and reads
 * everything that process writes. Under bubblewrap a tool can't even open the host's stdout through
 * `/proc/<host pid>/fd/1`; without it (bubblewrap hidden from PATH) it can, as docs/isolation.md says.
 */
import { type IOType, spawn } from 'node:child_process';
import { closeSync, openSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const PROCESS_HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const STRICT_HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const HOST_SCRIPT = fileURLToPath(new URL('./support/process-host.mjs', import.meta.url));
const { sandbox } = await processEnvironment();
const NO_SANDBOX = sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`;
const MARKER = 'MARKER-from-a-process-tool';
const SECRET = 'sk-fake-secret-behind-an-inherited-fd';

let root: string;
let runs = 0;
beforeEach(async () => {
  root = await tempDir('toolhost-process-stdio-');
});
afterEach(async () => {
  await removeDir(root);
});

interface HostRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Each call's outcome text. */
  texts: string[];
}

/** The descriptor the host is handed a secrets file on: Node marks only low ones close-on-exec. */
const INHERITED_FD = 40;

/**
 * Runs a process-tier host with `calls`. Its stdout is a file, as a service's log often is (a pipe
 * or a terminal can be opened through /proc the same way; a socket, what Node gives a child for
 * 'pipe', can't). With `inherit`, that file is open in the host as descriptor 40, without
 * close-on-exec: what a shell's redirection, a supervisor or a careless parent leaves behind.
 */
async function runHost(
  calls: Array<{ name: string; args: unknown }>,
  options: { path?: string | undefined; inherit?: string } = {},
): Promise<HostRun> {
  const plan = { options: { isolation: 'process' }, packages: [PROCESS_HOSTILE, STRICT_HOSTILE], calls };
  const stdoutFile = join(root, `stdout-${++runs}.txt`);
  const stdoutFd = openSync(stdoutFile, 'a');
  const inherited = options.inherit === undefined ? undefined : openSync(options.inherit, 'r');
  const stdio: Array<IOType | number> = ['ignore', stdoutFd, 'pipe'];
  if (inherited !== undefined) stdio.push(...Array(INHERITED_FD - 3).fill('ignore'), inherited);
  let stderr = '';
  let code: number | null;
  try {
    const child = spawn(process.execPath, [HOST_SCRIPT, JSON.stringify(plan)], {
      stdio,
      env: { ...process.env, PATH: options.path ?? process.env['PATH'] ?? '' },
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  } finally {
    closeSync(stdoutFd);
    if (inherited !== undefined) closeSync(inherited);
  }
  const stdout = await readFile(stdoutFile, 'utf8');
  const texts = stdout
    .split('\n')
    .filter((line) => line.startsWith('RESULT '))
    .map((line) => JSON.parse(line.slice('RESULT '.length)).content[0]?.text as string);
  return { code, stdout, stderr, texts };
}

const WRITE = { name: 'proc_write_stdout', args: { marker: MARKER, hostPid: '$HOST_PID' } };

describe("isolation: 'process' and the host's stdio", () => {
  it("under bubblewrap, nothing a tool writes (fd 1, the raw stream, /proc/self/fd/1, a child, /proc/<host pid>/fd/1) reaches the host's stdout or stderr", async ({
    skip,
  }) => {
    skip(!sandbox.available, NO_SANDBOX);
    const run = await runHost([WRITE]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).not.toContain(MARKER);
    // Each way but the host's own descriptor wrote, to the process's null stdout; that one isn't there.
    expect(JSON.parse(run.texts[0] ?? '')).toEqual({
      fd1: 'written',
      rawStream: 'written',
      procSelf: 'written',
      procHost: 'ENOENT',
      child: 'written',
    });
  });

  it("without bubblewrap, the process's own stdio is still null, and the permission model refuses /proc/<host pid>/fd/1", async () => {
    const run = await runHost([WRITE], { path: '' });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.split('\n').filter((line) => line.includes(MARKER))).toEqual([]);
  });

  it.for<[string, string | undefined]>([
    ['under bubblewrap', undefined],
    ['without bubblewrap', ''],
  ])(
    "%s, a descriptor the host's parent left open (a secrets file) is closed before any tool runs",
    async ([, path], { skip }) => {
      skip(path === undefined && !sandbox.available, NO_SANDBOX);
      const secrets = join(root, 'secrets.txt');
      await writeFile(secrets, SECRET);
      const calls = [
        { name: 'strict_fd_read', args: { fd: INHERITED_FD } },
        { name: 'proc_whoami', args: {} },
        { name: 'proc_whoami', args: { fdinfo: true } },
      ];
      const run = await runHost(calls, { inherit: secrets, path });
      expect(run.code).toBe(0);
      // Its number may be one of Node's own again by then; the file is open nowhere in the process.
      expect(run.texts[0]).not.toContain(SECRET);
      if (path === '') {
        // Without a sandbox the permission model keeps a tool from opening its descriptors' files
        // through /proc/self/fd; it may read their flags, as the process does to close them.
        expect(run.texts[1]).toContain('refused FileSystemRead');
      } else {
        const fds = JSON.parse(run.texts[1] ?? '{}').fds as Record<string, { target: string }>;
        expect(Object.values(fds).map((entry) => entry.target)).not.toContain(secrets);
      }
      const infos = JSON.parse(run.texts[2] ?? '[]') as Array<{
        fd: number;
        ino: number | null;
        cloexec: boolean;
      }>;
      // The channel and Node's own descriptors are there, each with its inode: the list is real.
      expect(infos.filter((info) => info.ino !== null).length).toBeGreaterThan(3);
      const { ino } = statSync(secrets);
      expect(infos.filter((info) => info.ino === ino && !info.cloexec)).toEqual([]);
      // Nothing but its stdio and its channel is open without close-on-exec: nothing inherited.
      expect(infos.filter((info) => info.fd > 3 && !info.cloexec)).toEqual([]);
    },
  );
});
