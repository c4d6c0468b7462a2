/**
 * The process tier where there is no OS sandbox (here: bubblewrap hidden from the host's PATH, so the
 * tier finds none, as on a machine without it). What still holds: processes of the package's own,
 * their memory limit, no descriptor of the host's, the worker tier's guarantees inside; the host says
 * once what it lacks. Its processes run under Node's permission model with strict's grants, so reads
 * outside the package (the host's working directory too, on every Node line), writes outside its tmp
 * folder and child processes are refused; before Node 25 the network is not (docs/isolation.md's table says
 * so; these tests show it).
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { expectAllLeftOut, failed, type RecordingLogger, recordingLogger } from './support/host-harness.js';
import {
  CLIMBING_REASON,
  copyWithClimbingLink,
  copyWithEscapingLink,
  removeDir,
  tempDir,
} from './support/tool-packages.js';

// Before the tier first looks for bubblewrap (once per process): this file's process has none.
process.env['PATH'] = '';

const STRICT_HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const PROCESS_HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const environment = await processEnvironment();
const MB = 1024 * 1024;
/** Node 25 added the network to the permission model. */
const NODE_DENIES_NETWORK = process.allowedNodeEnvironmentFlags.has('--allow-net');
const HOST_SOURCE = fileURLToPath(new URL('../src/host/tool-host.ts', import.meta.url));
const LOAD_TIME_READ = fileURLToPath(new URL('../fixtures/strict/load-time-read', import.meta.url));

/** The error result of an operation Node's permission model refused in this tier. */
const denied = (permission: string, resource?: string) => ({
  code: 'TOOL_ACCESS_DENIED',
  message: `the process isolation tier refused ${permission}${resource === undefined ? '' : ` on ${resource}`}`,
});

/** What the notice adds for what Node's permission model can't contain on this Node. */
function modelGaps(): string {
  return NODE_DENIES_NETWORK ? '' : ', which here does not contain the network (Node 25 and later deny it)';
}

/** The package's next call and another package's both still answer. */
async function expectNextCallsWork(): Promise<void> {
  expect(outcomeText(await host.call('strict_tmp_roundtrip', {}))).toBe('kept in tmpDir');
  expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
}

let root: string;
let host: ToolHost;
let logger: RecordingLogger;
let server: Server | undefined;

beforeEach(async () => {
  root = await tempDir('toolhost-process-no-sandbox-');
  logger = recordingLogger();
  host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'process', logger, processMemoryMb: 256 });
  for (const path of [STRICT_HOSTILE, PROCESS_HOSTILE]) {
    const report = await host.load(path);
    expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
  }
});

afterEach(async () => {
  await host.close();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
  await removeDir(root);
});

describe("isolation: 'process' without an OS sandbox: what holds", () => {
  it('the tier found no sandbox, and the host says what that leaves out once, however many packages and calls', async () => {
    expect(environment.sandbox).toEqual({ available: false, reason: 'bubblewrap (bwrap) is not installed' });
    await host.call('strict_tmp_roundtrip', {});
    await host.call('proc_whoami', {});
    const gaps = [
      `an OS sandbox (bubblewrap (bwrap) is not installed), so its processes are confined by Node's permission model with strict's grants instead${modelGaps()}`,
      ...(environment.cgroups.available
        ? []
        : [
            `a memory cgroup (${environment.cgroups.reason}), so processMemoryMb is watched (resident memory, every 50 ms), not enforced by the kernel`,
          ]),
    ];
    expect(logger.matching('warn', 'process isolation')).toEqual([
      `process isolation here runs without ${gaps.join(', and without ')}; see the table of what each tier contains in docs/isolation.md`,
    ]);
  });

  it("its tools can't list their process's descriptors in /proc", async () => {
    // Its descriptors (none of the host's) are the process tier's own check (process-stdio.test.ts):
    // here the permission model keeps a tool from opening them through /proc/self/fd.
    const outcome = await host.call('proc_whoami', {});
    expect(outcome.error).toMatchObject(denied('FileSystemRead', '/proc/self/fd'));
    await expectNextCallsWork();
  });

  it("a tool that exits after writing into its tmpDir answers TOOL_EXITED, and the call's tmpDir, which its process could not remove, is removed", async () => {
    // No spare here (a spare's whole folder goes with it): the call ran in a process of the pool's own.
    let tmpDir: string | undefined;
    host.on('progress', (event) => {
      if (event.callId === 'exits') tmpDir = String(event.data);
    });
    const outcome = await host.call('proc_exit_after_tmp', {}, { callId: 'exits' });
    expect(outcome).toStrictEqual(failed('TOOL_EXITED', 'the tool called process.exit(4)'));
    expect(tmpDir).toMatch(/\/call-\d+$/);
    // Removed on the host after the answer, without anyone waiting for it: waited for here.
    while (existsSync(tmpDir as string)) await delay(10);
    await expectNextCallsWork();
  });

  it('its memory limit still holds: a Buffer bomb answers TOOL_OUT_OF_MEMORY and the host stays flat', async () => {
    const before = process.memoryUsage.rss();
    const outcome = await host.call('proc_memory_bomb', { megabytes: 8192, kind: 'buffer' });
    expect(process.memoryUsage.rss() - before).toBeLessThan(100 * MB);
    expect(outcome).toStrictEqual(
      failed(
        'TOOL_OUT_OF_MEMORY',
        environment.cgroups.available
          ? "the tool's process ran out of memory (limit 256 MB)"
          : "the tool's process went over its memory limit (256 MB of resident memory)",
      ),
    );
    expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
  });
});

describe("isolation: 'process' without an OS sandbox: its processes are confined by Node's permission model", () => {
  it("a tool reading a secrets file outside its package, or the host's start-up environment, gets TOOL_ACCESS_DENIED; the next call and another package are fine", async () => {
    const secrets = join(root, 'secrets.env');
    await writeFile(secrets, 'API_TOKEN=sk-fake-secret-without-a-sandbox\n');
    const outcome = await host.call('strict_read_file', { path: secrets });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', secrets));
    expect(outcomeText(outcome)).not.toContain('sk-fake-secret');
    const environ = await host.call('strict_read_file', { path: `/proc/${process.pid}/environ` });
    expect(environ.error).toMatchObject(denied('FileSystemRead', `/proc/${process.pid}/environ`));
    await expectNextCallsWork();
  });

  it('a package holding a link to a folder above itself is left out at load, as under strict', async () => {
    const { copy, link, target } = await copyWithClimbingLink(STRICT_HOSTILE, root);
    const report = await host.load(copy);
    expectAllLeftOut(
      report,
      'MODULE_OUTSIDE_PACKAGE',
      CLIMBING_REASON('process isolation without an OS sandbox', link, target),
    );
    await expectNextCallsWork();
  });

  it('a package holding a symbolic link that leads outside it is left out at load, as under strict: nothing of it is offered', async () => {
    // The permission model grants the package's folder by path; the OS then follows its link.
    const { copy, link, target } = await copyWithEscapingLink(STRICT_HOSTILE, root);
    const other = new ToolHost({
      dataDir: join(root, 'other-data'),
      isolation: 'process',
      logger: recordingLogger(),
    });
    try {
      const report = await other.load(copy);
      expectAllLeftOut(
        report,
        'MODULE_OUTSIDE_PACKAGE',
        `process isolation without an OS sandbox can't confine this package: ${link} is a symbolic link to ${target}, outside the package (Node's permission model follows symbolic links)`,
      );
      expect(other.list()).toEqual([]);
    } finally {
      await other.close();
    }
    await expectNextCallsWork();
  });

  it("a tool reading the host's sources in the host's working directory gets TOOL_ACCESS_DENIED on every Node line, and a module that looks for them in its working directory while it is read finds nothing", async () => {
    // Node 22 and later grant a worker under the permission model its working directory, not a
    // process's main thread: the tier's calls run on one, and its declaration readers (workers) in a
    // process whose working directory is its own tmp folder.
    const outcome = await host.call('strict_read_file', { path: HOST_SOURCE });
    expect(outcome.error).toMatchObject(denied('FileSystemRead', HOST_SOURCE));
    const report = await host.load(LOAD_TIME_READ);
    expect(report.modules[0]).toMatchObject({ state: 'left-out', code: 'IMPORT_FAILED' });
    expect(report.modules[0]?.reason).toMatch(/ENOENT: no such file or directory/);
    await expectNextCallsWork();
  });

  it('a tool writing outside its tmpDir gets TOOL_ACCESS_DENIED and nothing is written; the next call and another package are fine', async () => {
    const target = join(root, 'written-by-tool.txt');
    const outcome = await host.call('strict_write_file', { path: target, text: 'written' });
    expect(outcome.error).toMatchObject(denied('FileSystemWrite', target));
    expect(existsSync(target)).toBe(false);
    await expectNextCallsWork();
  });

  it('a tool spawning a child process gets TOOL_ACCESS_DENIED and the child never runs; the next call and another package are fine', async () => {
    const marker = join(root, 'spawned.txt');
    const outcome = await host.call('strict_spawn', { marker });
    // Newer Node releases (22.23.5, 24.22.3 and 26.12.1 here) name the executable too; Node 20 doesn't.
    const { stack: _stack, ...error } = outcome.error ?? {};
    expect([denied('ChildProcess'), denied('ChildProcess', process.execPath)]).toContainEqual(error);
    expect(existsSync(marker)).toBe(false);
    await expectNextCallsWork();
  });

  it('a tool of a package that did not ask for the network reaches a local server before Node 25, and is refused from Node 25 on', async () => {
    const requests: string[] = [];
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      response.end('reached a local server');
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const outcome = await host.call('strict_fetch', { url: `http://127.0.0.1:${port}/exfiltrate` });
    if (NODE_DENIES_NETWORK) {
      expect(outcome.error).toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
      expect(outcome.error?.message).toMatch(/^the process isolation tier refused Net /);
      expect(requests).toEqual([]);
    } else {
      expect(outcomeText(outcome)).toBe('reached a local server');
      expect(requests).toEqual(['/exfiltrate']);
    }
    await expectNextCallsWork();
  });
});
