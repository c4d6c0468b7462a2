/**
 * The host's file descriptors. Worker threads share their process's descriptor table, and Node's
 * permission model checks paths, not descriptors: a tool that closes 3 to 255 would close the host's
 * pool pipes and event loop (libuv then aborts the process), and one that closes 1 and opens a file
 * would get the host's stdout. Every tier's workers let a tool use only the descriptors it opened
 * itself. The hosts under attack run in child processes of their own, so the test sees whether they
 * live and what reached their real stdout.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost, type ToolHostOptions, type ToolOutcome } from '../dist/src/index.js';
import { answered, recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const DESCRIPTORS = fileURLToPath(new URL('../fixtures/strict/descriptors', import.meta.url));
const TEXT_STATS = fileURLToPath(new URL('../fixtures/packages/text-stats', import.meta.url));
const PRINT_AFTER_CALLS = fileURLToPath(new URL('./support/hosts/print-after-calls.mjs', import.meta.url));
const STATS_CALL = { tool: 'text_stats', args: { text: 'one two' } };

/** What a refused descriptor looks like to the tool: the OS's EBADF, saying why. */
const refusedClose = (fd: number) => ({
  code: 'TOOL_THREW',
  message: `EBADF: bad file descriptor, close (descriptor ${fd} was not opened by this tool; toolhost refuses the host's descriptors)`,
});

/** What the tool that uses its own descriptors reads back, in a tier. */
function ownDescriptorsAnswer(isolation: string): unknown {
  // The permission model refuses these four on every descriptor, the tool's own included.
  const metadata = isolation === 'strict' ? 'ERR_ACCESS_DENIED' : 'ok';
  return {
    read: 'hello own fd',
    size: 12,
    truncated: 'hello',
    callbackSize: 17,
    streamed: 'through a stream on its own fd',
    fromHandle: '',
    written: 'through again',
    bytesRead: 7,
    metadata: { fsyncSync: metadata, fdatasyncSync: metadata, fchmodSync: metadata, futimesSync: metadata },
    byPath: 'by path and appended',
    piped: 'by path and appended',
  };
}

let root: string;
beforeEach(async () => {
  root = await tempDir('toolhost-descriptors-');
});
afterEach(async () => {
  await removeDir(root);
});

interface PrintedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  outcomes: ToolOutcome[] | undefined;
}

/** Runs test/support/hosts/print-after-calls.mjs and waits for it to exit by itself. */
function runPrintingHost(options: ToolHostOptions, calls: Array<{ tool: string; args: unknown }>) {
  const config = { load: [DESCRIPTORS, TEXT_STATS], options, calls };
  const child = spawn(process.execPath, [PRINT_AFTER_CALLS, JSON.stringify(config)], {
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const collected = { stdout: '', stderr: '', report: '' };
  child.stdout?.on('data', (chunk: Buffer) => {
    collected.stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    collected.stderr += chunk.toString();
  });
  child.stdio[3]?.on('data', (chunk: Buffer) => {
    collected.report += chunk.toString();
  });
  return new Promise<PrintedRun>((resolve) => {
    child.once('close', (code, signal) => {
      const report = collected.report === '' ? undefined : JSON.parse(collected.report);
      resolve({
        code,
        signal,
        stdout: collected.stdout,
        stderr: collected.stderr,
        outcomes: report?.outcomes,
      });
    });
  });
}

/** What the printing host writes on its own stdout after `count` calls. */
const printedAfter = (count: number) =>
  Array.from({ length: count }, (_, index) => `host ${index} console\nhost ${index} fd\n`).join('');

describe.each(['worker', 'strict', 'process'] as const)("isolation: '%s'", (isolation) => {
  const options = (): ToolHostOptions => ({ dataDir: join(root, 'data'), isolation });

  it('a tool that closes descriptors 3 to 255 gets EBADF as an error result, and the host keeps its descriptors, its stdout and its next calls', async () => {
    const run = await runPrintingHost(options(), [
      { tool: 'fd_close_all', args: {} },
      { tool: 'fd_close_all', args: { careful: true } },
      { tool: 'fd_own_descriptors', args: {} },
      STATS_CALL,
    ]);

    expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    expect(run.stdout).toBe(printedAfter(4));
    const [naive, careful, own, stats] = run.outcomes ?? [];
    expect(naive?.error).toMatchObject(refusedClose(3));
    // Past every refusal: not one descriptor of the host's was closed.
    expect(careful).toEqual(answered('closed 0'));
    expect(JSON.parse(outcomeText(own as ToolOutcome))).toEqual(ownDescriptorsAnswer(isolation));
    expect(stats?.isError).toBe(false);
  });

  it("a tool that closes descriptor 1 to take over the host's stdout gets an error result, and the host's later output stays on its stdout", async () => {
    const run = await runPrintingHost(options(), [
      { tool: 'fd_steal_stdout', args: {} },
      { tool: 'fd_steal_stdout', args: {} },
      STATS_CALL,
    ]);

    expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    expect(run.stdout).toBe(printedAfter(3));
    const [first, second, stats] = run.outcomes ?? [];
    expect(first?.error).toMatchObject(refusedClose(1));
    expect(second?.error).toMatchObject(refusedClose(1));
    expect(stats?.isError).toBe(false);
  });
});

describe.each(['worker', 'strict'] as const)("isolation: '%s', a host in this process", (isolation) => {
  let host: ToolHost;
  afterEach(async () => {
    await host?.close();
  });

  it('every route a tool knows to a descriptor the host holds open (fs, streams, FileHandles, sockets, tty) is refused, and the file and the descriptor are untouched', async () => {
    host = new ToolHost({ dataDir: join(root, 'data'), isolation, logger: recordingLogger() });
    for (const source of [DESCRIPTORS, TEXT_STATS]) {
      const report = await host.load(source);
      expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
    }
    const secrets = join(root, 'secrets.txt');
    await writeFile(secrets, 'sk-fake-secret-behind-an-open-fd', { mode: 0o600 });
    const fd = openSync(secrets, 'r+');
    try {
      const outcome = await host.call('fd_descriptor_routes', { fd });
      const answers = JSON.parse(outcomeText(outcome)) as Record<string, string>;
      expect(Object.keys(answers).length).toBeGreaterThan(30);
      const reached = Object.entries(answers).filter(([, answer]) => !/^(refused |absent$)/.test(answer));
      expect(reached).toEqual([]);
      // The refusals that are the guard's own say EBADF, as the OS would for a closed descriptor.
      expect(answers['readSync']).toBe('refused EBADF');
      expect(answers['fs.close']).toBe('refused EBADF');
      expect(answers['readSync(0)']).toBe('refused EBADF');
      expect(answers['tty.WriteStream(1)']).toBe('refused EBADF');
      // Its own terminal opens; the native constructor behind it still refuses the host's 1. (Strict's
      // permission model may refuse the terminal itself.)
      if (isolation === 'worker') {
        expect(answers['native TTY(1), from a terminal of its own']).toBe('refused EBADF');
      }
      expect(answers['fs.promises.writeFile(forged handle)']).toBe('refused EBADF');

      // The host's descriptor is still open, on the same file, with what it held.
      const buffer = Buffer.alloc(64);
      const length = readSync(fd, buffer, 0, 64, 0);
      expect(buffer.subarray(0, length).toString()).toBe('sk-fake-secret-behind-an-open-fd');
      expect(fstatSync(fd).mode & 0o777).toBe(0o600);
      expect(await readFile(secrets, 'utf8')).toBe('sk-fake-secret-behind-an-open-fd');
      // And this process's own stdout, which the tool tried to open a socket and a TTY on.
      expect(() => fstatSync(1)).not.toThrow();
    } finally {
      closeSync(fd);
    }

    const own = await host.call('fd_own_descriptors', {});
    expect(JSON.parse(outcomeText(own))).toEqual(ownDescriptorsAnswer(isolation));
    expect((await host.call('text_stats', { text: 'one two' })).isError).toBe(false);
  });
});
