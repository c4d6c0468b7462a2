/**
 * Declarations of process-tier packages are read outside the host: in a throwaway process of the
 * package's own (sandboxed and memory-limited like its calls), each module still in a throwaway worker
 * there. Every bad declaration is left out exactly as in the worker tier (declarations-left-out.test.ts);
 * here, a read over its time bound is re-read later (in a process again), and what only a process
 * boundary contains (memory outside the reader's heap) leaves the module out while the host stays flat.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { outcomeText } from '../dist/src/index.js';
import {
  expectHostFine,
  FakeClock,
  fixtureModule,
  loadEcho,
  nextModuleEvent,
  statusesOf,
  statusOf,
  useHosts,
} from './support/host-harness.js';

const READS = fileURLToPath(new URL('../fixtures/process/reads/tools/', import.meta.url));
const MB = 1024 * 1024;

const makeHost = useHosts();

describe("isolation: 'process', a declaration read over its time bound", () => {
  it('a read over its time bound is left out for now, and re-read later in a process again', async () => {
    const clock = new FakeClock();
    const { host } = await makeHost({ isolation: 'process', readTimeoutMs: 1_000, clock });
    const path = fixtureModule('decl-name-loops.js');
    const start = clock.now();
    const pending = (nextRereadAt: number) => ({
      path,
      source: path,
      state: 'reread-pending',
      code: 'DECLARATION_TIMEOUT',
      reason: 'reading the declaration took longer than 1000 ms',
      nextRereadAt,
    });

    let scheduled = nextModuleEvent(host, (event) => event.type === 'reread-pending');
    await host.load(path);
    expect(statusOf((await scheduled).status)).toStrictEqual(pending(start + 60_000));

    // After 1 minute: read again, in a new process (it times out again), next re-read 5 minutes later.
    scheduled = nextModuleEvent(host, (event) => event.type === 'reread-pending');
    clock.advance(60_000);
    expect(statusOf((await scheduled).status)).toStrictEqual(pending(start + 360_000));
  });
});

describe("isolation: 'process', where a declaration is read", () => {
  it("not in the host's process, nor in the process its calls then run in", async () => {
    const { host } = await makeHost({ isolation: 'process' });
    const report = await host.load(`${READS}reports-pid.js`);
    const [tool] = host.list();
    const readIn = Number(/^read in process (\d+)$/.exec(tool?.description ?? '')?.[1]);
    const called = await host.call('reads_reports_pid', {});
    const calledIn = Number(/^called in process (\d+)$/.exec(outcomeText(called))?.[1]);

    expect(report.modules[0]?.state).toBe('offered');
    expect(readIn).toBeGreaterThan(0);
    expect(readIn).not.toBe(process.pid);
    expect(calledIn).toBeGreaterThan(0);
    expect(calledIn).not.toBe(process.pid);
  });

  it('a module that fills gigabytes of Buffers while it is read is left out, and the host stays flat', async () => {
    const { host } = await makeHost({ isolation: 'process', processMemoryMb: 256 });
    await loadEcho(host);
    const path = `${READS}buffer-bomb.js`;
    const before = process.memoryUsage.rss();

    const report = await host.load(path);

    expect(process.memoryUsage.rss() - before).toBeLessThan(100 * MB);
    expect(statusesOf(report.modules)).toStrictEqual([
      {
        path,
        source: path,
        state: 'left-out',
        code: 'DECLARATION_OUT_OF_MEMORY',
        // The same whether a cgroup or the watchdog holds the limit.
        reason:
          "buffer-bomb.js: reading the declaration ran out of memory (the package's process limit, 256 MB)",
      },
    ]);
    await expectHostFine(host);
  });
});
