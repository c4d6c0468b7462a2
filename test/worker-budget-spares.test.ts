/**
 * The process tier's spare process under the host-wide worker budget: a spare counts one place, as
 * a package process does. It starts only into a free place that no pool waits for, it is the first
 * unit ended when a pool needs room, and a pool that takes it (or falls back to a process of its
 * own when the package can't be placed in it) stays on that one place. What the budget counts is
 * checked against the sandboxes really running. These tests need bubblewrap and skip, saying why,
 * where it can't run.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, type ToolHost } from '../dist/src/index.js';
import { MAX_MIRRORED_ENTRIES } from '../dist/src/process/pool/spare-mirror.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { descendantsOf } from '../dist/src/shared/process-tree.js';
import { Calls, writeHeldPackage } from './support/held-calls.js';
import { expectHostFine, loadEcho, nextEvent, useHosts } from './support/host-harness.js';
import { tempDir } from './support/tool-packages.js';

const { sandbox } = await processEnvironment();

/** Sandboxes (package processes and spares) alive below this process: their pid namespaces. */
function sandboxes(): number {
  const own = readlinkSync('/proc/self/ns/pid');
  const namespaces = new Set<string>();
  for (const pid of descendantsOf(process.pid)) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('child-main.js')) continue;
      // A process that has exited and not been reaped yet runs nothing.
      const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)?.[0];
      if (state === 'Z' || state === 'X') continue;
      const namespace = readlinkSync(`/proc/${pid}/ns/pid`);
      if (namespace !== own) namespaces.add(namespace);
    } catch {
      // It exited while it was read.
    }
  }
  return namespaces.size;
}

/** The host's spare has started (subscribe before the load that starts it). */
function spareStarted(host: ToolHost): Promise<unknown> {
  return nextEvent(host, 'workers', (event) => event.source === 'spare' && event.type === 'started');
}

describe("maxWorkers with spare processes (isolation 'process')", () => {
  const makeHost = useHosts();

  beforeEach(({ skip }) => {
    skip(!sandbox.available, sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`);
  });

  async function oneWorkerHost() {
    const { host } = await makeHost({ maxWorkers: 1, maxThreadsPerPool: 1, isolation: 'process' });
    return { host, calls: new Calls(host), root: await tempDir('toolhost-budget-spares-') };
  }

  it('with maxWorkers 1 the spare holds the only place: it is the first thing ended when another package needs a worker, and none starts beside a package process', async () => {
    const { host, calls, root } = await oneWorkerHost();
    const started = spareStarted(host);
    await host.load(await writeHeldPackage(root, 'p'));
    await started;
    await host.load(await writeHeldPackage(root, 'w'), { isolation: 'worker' });

    const inThread = calls.call('w');
    expect(await calls.nextStarted()).toBe(inThread);
    const ended = calls.events.filter((event) => event.type === 'ended');
    expect(ended.map((event) => event.source)).toEqual(['spare']);
    // The spare's process was gone before the thread got its place.
    expect(sandboxes()).toBe(0);
    expect(outcomeText(await calls.release(inThread))).toBe('released');

    for (let index = 0; index < 2; index += 1) {
      const inProcess = calls.call('p');
      expect(await calls.nextStarted()).toBe(inProcess);
      // p's own process, and no spare made again after its first call: there is no room for one.
      expect(sandboxes()).toBe(1);
      expect(outcomeText(await calls.release(inProcess))).toBe('released');
    }
    expect(calls.events.filter((event) => event.source === 'spare' && event.type === 'started')).toHaveLength(
      1,
    );
    expect(calls.most).toBe(1);
    expect(calls.events.every((event) => event.workers <= 1 && event.limit === 1)).toBe(true);
    await loadEcho(host);
    await expectHostFine(host);
  });

  it('a package the spare can’t hold (a snapshot too large to mirror) takes the spare’s place and runs in a process of its own on it: never two at once', async () => {
    const { host, calls, root } = await oneWorkerHost();
    const files = Object.fromEntries(
      Array.from({ length: MAX_MIRRORED_ENTRIES + 100 }, (_, index) => [`data-${index}.txt`, `${index}`]),
    );
    const started = spareStarted(host);
    await host.load(await writeHeldPackage(root, 'large', files));
    await started;

    const first = calls.call('large');
    expect(await calls.nextStarted()).toBe(first);
    expect(first.tmpDir).not.toContain('/spares/');
    expect(sandboxes()).toBe(1);
    expect(outcomeText(await calls.release(first))).toBe('released');
    // Its next call runs in the same process.
    expect((await calls.runOnce('large')).worker).toBe(first.worker);
    expect(calls.most).toBe(1);
    await loadEcho(host);
    await expectHostFine(host);
  });
});
