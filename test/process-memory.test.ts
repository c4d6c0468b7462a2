/**
 * The process tier's memory limit covers all of a package's process, not only the heap: a tool that
 * fills gigabytes of Buffers or ArrayBuffers (which a heap limit doesn't see, and which in the worker
 * tier would land in the host's own process) gets TOOL_OUT_OF_MEMORY, the host's resident memory
 * stays where it was, and the next call runs in a new process. Enforced by a memory cgroup where the
 * host can make one; the RSS watchdog that stands in elsewhere is run here too, on a real process.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { ProcessDomainPool } from '../dist/src/process/pool/process-pool.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { failed, useHosts } from './support/host-harness.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const MB = 1024 * 1024;
/** What the tool tries to hold: far over the limit, and more than a test machine should give. */
const BOMB_MB = 8192;
const LIMIT_MB = 256;
const environment = await processEnvironment();

const makeHost = useHosts();

/** How the host says the limit ended the process, by the mechanism this machine has. */
const outOfMemory = environment.cgroups.available
  ? `the tool's process ran out of memory (limit ${LIMIT_MB} MB)`
  : `the tool's process went over its memory limit (${LIMIT_MB} MB of resident memory)`;

describe("isolation: 'process' and memory outside the heap", () => {
  it.each(['buffer', 'arraybuffer'])(
    'a tool that fills gigabytes of %ss gets TOOL_OUT_OF_MEMORY, the host stays flat, and the next call runs',
    async (kind) => {
      const { host } = await makeHost({ isolation: 'process', processMemoryMb: LIMIT_MB, callHeapMb: 64 });
      await host.load(HOSTILE);
      const first = await host.call('proc_whoami', {});
      const before = process.memoryUsage.rss();

      const outcome = await host.call('proc_memory_bomb', { megabytes: BOMB_MB, kind });

      const grown = process.memoryUsage.rss() - before;
      expect(outcome).toStrictEqual(failed('TOOL_OUT_OF_MEMORY', outOfMemory));
      expect(grown).toBeLessThan(100 * MB);
      const next = await host.call('proc_whoami', {});
      expect(next.isError).toBe(false);
      // A new process: the one the limit ended is gone.
      expect(next).not.toStrictEqual(first);
      expect(await host.call('proc_read_own_file', {})).toMatchObject({ isError: false });
    },
  );

  it('a tool that stays under the limit holds what it allocated', async () => {
    const { host } = await makeHost({ isolation: 'process', processMemoryMb: 512 });
    await host.load(HOSTILE);
    const outcome = await host.call('proc_memory_bomb', { megabytes: 128, kind: 'buffer' });
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toEqual([{ type: 'text', text: JSON.stringify({ heldMegabytes: 128 }) }]);
  });

  it('processMemoryMb is checked when the host is built', () => {
    expect(() => new ToolHost({ processMemoryMb: 0 })).toThrow(
      'Expected `processMemoryMb` to be a positive integer, got 0',
    );
    expect(() => new ToolHost({ processMemoryMb: 1.5 })).toThrow(
      'Expected `processMemoryMb` to be a positive integer, got 1.5',
    );
  });
});

describe('the RSS watchdog (where no memory cgroup can be made)', () => {
  let tmp: string | undefined;
  afterEach(async () => {
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
    tmp = undefined;
  });

  it.skipIf(process.platform !== 'linux')(
    'kills a process whose resident memory goes over the limit: the call answers TOOL_OUT_OF_MEMORY and the host stays flat',
    async () => {
      tmp = await realpath(await mkdtemp(join(tmpdir(), 'toolhost-watchdog-')));
      const faults: string[] = [];
      const pool = new ProcessDomainPool({
        limits: {
          maxThreads: 1,
          idleTimeoutMs: 30_000,
          heapMb: 64,
          stackMb: 4,
          timeoutGraceMs: 100,
          env: {},
          execArgv: ['--no-addons'],
          allowAddons: false,
          call: { dataDir: tmp, tmpDir: join(tmp, 'domain'), maxResultBytes: MB, maxLogChars: 1000 },
        },
        paths: { readOnly: [HOSTILE], tmpDir: join(tmp, 'domain'), network: false },
        memoryMb: LIMIT_MB,
        // This machine's sandbox, but no cgroup: the watchdog is what holds.
        environment: async () => ({
          ...environment,
          cgroups: { available: false, reason: 'not in this test' },
        }),
        onFault: (message) => faults.push(message),
      });
      const task = (file: string, args: unknown, taskId: string) => ({
        kind: 'run' as const,
        taskId,
        callId: taskId,
        sessionId: 'default',
        moduleUrl: pathToFileURL(join(HOSTILE, 'tools', file)).href,
        args,
        withheld: [],
        timeoutMs: 120_000,
      });
      try {
        const before = process.memoryUsage.rss();
        const reply = await pool.run(task('memory-bomb.js', { megabytes: BOMB_MB, kind: 'buffer' }, '1'));
        expect(process.memoryUsage.rss() - before).toBeLessThan(100 * MB);
        expect(reply).toMatchObject({
          ok: false,
          error: {
            code: 'TOOL_OUT_OF_MEMORY',
            message: `the tool's process went over its memory limit (${LIMIT_MB} MB of resident memory)`,
          },
        });
        const next = await pool.run(task('read-own-file.js', {}, '2'));
        expect(next).toMatchObject({ ok: true, content: [{ type: 'text', text: 'process-hostile' }] });
        expect(faults).toEqual([]);
      } finally {
        await pool.close();
      }
    },
  );
});
