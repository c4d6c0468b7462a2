/**
 * The process tier where there is no OS sandbox (here: bubblewrap hidden from the host's PATH, so the
 * tier finds none, as on a machine without it). What still holds: a process of the package's own,
 * its memory limit, no descriptor of the host's, the worker tier's guarantees inside; the host says
 * once what it lacks. What does not: the files, `/proc` and the network the host's user can reach
 * (the README's table says so; these tests show it).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/process-tier.js';
import { failed, type RecordingLogger, recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

// Before the tier first looks for bubblewrap (once per process): this file's process has none.
process.env['PATH'] = '';

const STRICT_HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const PROCESS_HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const environment = await processEnvironment();
const MB = 1024 * 1024;

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
      "an OS sandbox (bubblewrap (bwrap) is not installed), so its tools can read and write what the host's user can, reach the network and signal the host's processes",
      ...(environment.cgroups.available
        ? []
        : [
            `a memory cgroup (${environment.cgroups.reason}), so processMemoryMb is watched (resident memory, every 50 ms), not enforced by the kernel`,
          ]),
    ];
    expect(logger.matching('warn', 'process isolation')).toEqual([
      `process isolation here runs without ${gaps.join(', and without ')}; see the README's table of what each tier contains`,
    ]);
  });

  it("calls run in a process of the package's own, with no descriptor of the host's", async () => {
    const seen = JSON.parse(outcomeText(await host.call('proc_whoami', {}))) as {
      pid: number;
      ppid: number;
      fds: Record<string, { target: string; cloexec: boolean }>;
    };
    expect(seen.pid).not.toBe(process.pid);
    expect(seen.ppid).toBe(process.pid);
    expect(Object.entries(seen.fds).filter(([, fd]) => !fd.cloexec)).toEqual([]);
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

describe("isolation: 'process' without an OS sandbox: what does not hold (documented)", () => {
  it('a tool can read a secrets file outside its package, and the start-up environment of the host', async () => {
    const secrets = join(root, 'secrets.env');
    await writeFile(secrets, 'API_TOKEN=sk-fake-secret-without-a-sandbox\n');
    expect(outcomeText(await host.call('strict_read_file', { path: secrets }))).toBe(
      'API_TOKEN=sk-fake-secret-without-a-sandbox\n',
    );
    const environ = outcomeText(
      await host.call('strict_read_file', { path: `/proc/${process.pid}/environ` }),
    );
    expect(environ).toContain('\0');
    expect(environ.split('\0').some((entry) => entry.includes('='))).toBe(true);
  });

  it('a tool can write outside its tmpDir', async () => {
    const target = join(root, 'written-by-tool.txt');
    expect(outcomeText(await host.call('strict_write_file', { path: target, text: 'written' }))).toBe(
      'written',
    );
    expect(await readFile(target, 'utf8')).toBe('written');
  });

  it('a tool of a package that did not ask reaches a local server', async () => {
    const requests: string[] = [];
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      response.end('reached a local server');
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const outcome = await host.call('strict_fetch', { url: `http://127.0.0.1:${port}/exfiltrate` });
    expect(outcomeText(outcome)).toBe('reached a local server');
    expect(requests).toEqual(['/exfiltrate']);
  });
});
