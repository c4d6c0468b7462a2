/**
 * The host-wide worker budget (`maxWorkers`): the host never runs more workers than it (threads in
 * the thread tiers, package processes in the process tier), idle packages' workers are ended to make
 * room, calls beyond it take turns across packages, a waiting call's
 * timeout counts from when it starts, and every way a call leaves (answered, aborted while waiting,
 * the host closing, its worker exiting) lets the next one run.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RUN_LENGTH } from '../dist/src/calls/budget-limits.js';
import { type IsolationTier, outcomeText } from '../dist/src/index.js';
import { Calls, type Held, writeHeldPackage } from './support/held-calls.js';
import { expectHostFine, loadEcho, useHosts } from './support/host-harness.js';
import { tempDir, toolSource, writePackage } from './support/tool-packages.js';

/** Consecutive calls of one package in a start order: `[['a', 6], ['b', 5], …]`. */
function runsOf(order: string[]): Array<[string, number]> {
  const runs: Array<[string, number]> = [];
  for (const pkg of order) {
    const last = runs.at(-1);
    if (last?.[0] === pkg) last[1] += 1;
    else runs.push([pkg, 1]);
  }
  return runs;
}

const TIERS: IsolationTier[] = ['worker', 'strict', 'process'];

describe.each(TIERS)("maxWorkers, isolation '%s'", (tier) => {
  const makeHost = useHosts();

  async function hostWith(maxWorkers: number, packages: string[], maxThreadsPerPool = 1) {
    const { host } = await makeHost({
      maxWorkers,
      maxThreadsPerPool,
      isolation: tier,
      timeoutGraceMs: 20,
    });
    const root = await tempDir('toolhost-budget-');
    for (const pkg of packages) {
      const report = await host.load(await writeHeldPackage(root, pkg));
      expect(report.modules.map((module) => module.state)).toEqual(['offered', 'offered']);
    }
    return { host, root, calls: new Calls(host) };
  }

  it('ends one idle package’s worker to make room, the other keeps its own, and never runs more than the budget', async () => {
    const { host, root, calls } = await hostWith(2, ['a', 'b', 'c']);
    const first = { a: await calls.runOnce('a'), b: await calls.runOnce('b') };
    const endedBefore = calls.events.filter((event) => event.type === 'ended').length;
    await calls.runOnce('c');
    const ended = calls.events.filter((event) => event.type === 'ended').slice(endedBefore);
    // Which one depends on how long ago each last started a call (worker-budget-room.test.ts).
    expect(ended).toHaveLength(1);
    const kept = ended[0]?.source === join(root, 'a') ? 'b' : 'a';
    expect(ended[0]?.source).toBe(join(root, kept === 'a' ? 'b' : 'a'));
    expect((await calls.runOnce(kept)).worker).toBe(first[kept].worker);
    expect(calls.most).toBe(2);
    expect(calls.events.every((event) => event.limit === 2)).toBe(true);
    await loadEcho(host);
    await expectHostFine(host);
  });

  it('packages of several threads each never run more workers together than the budget', async () => {
    const { host, calls } = await hostWith(3, ['a', 'b', 'c'], 2);
    const all = ['a', 'b', 'c'].flatMap((pkg) => Array.from({ length: 4 }, () => calls.call(pkg)));
    for (let index = 0; index < all.length; index += 1) {
      expect(outcomeText(await calls.release(await calls.nextStarted()))).toBe('released');
    }
    expect(new Set(calls.started)).toEqual(new Set(all));
    expect(calls.most).toBeGreaterThan(0);
    expect(calls.most).toBeLessThanOrEqual(3);
    await loadEcho(host);
    await expectHostFine(host);
  });

  it.runIf(tier !== 'process')(
    'a call queued behind a busy worker takes no place of its own, and moves to a worker that falls idle',
    async () => {
      const { host, calls } = await hostWith(2, ['a', 'b'], 2);
      const all = [calls.call('a'), calls.call('a')];
      await calls.nextStarted();
      const second = await calls.nextStarted();
      // Both of a's workers run: a's next call is posted behind the first; b's waits for a place.
      all.push(calls.call('a'), calls.call('b'));
      // The second worker falls idle while b waits: a's queued call moves to it, not b.
      expect(outcomeText(await calls.release(second))).toBe('released');
      const moved = await calls.nextStarted();
      expect(moved.pkg).toBe('a');
      for (const held of [calls.started[0] as Held, moved]) {
        expect(outcomeText(await calls.release(held))).toBe('released');
      }
      expect(outcomeText(await calls.release(await calls.nextStarted()))).toBe('released');
      expect(new Set(calls.started)).toEqual(new Set(all));
      expect(calls.most).toBe(2);
      await loadEcho(host);
      await expectHostFine(host);
    },
  );

  it('a package that floods calls can’t starve another: its call starts within one run of the other’s calls', async () => {
    const { host, calls } = await hostWith(1, ['a', 'b']);
    const floodSize = RUN_LENGTH + 4;
    const flood = Array.from({ length: floodSize }, () => calls.call('a'));
    const first = await calls.nextStarted();
    expect(first).toBe(flood[0]);
    const single = calls.call('b');
    // Each started call is let go as it starts, in start order, until every call has answered.
    const order: string[] = [first.pkg];
    await calls.release(first);
    for (let index = 1; index <= floodSize; index += 1) {
      const next = await calls.nextStarted();
      order.push(next.pkg);
      expect(outcomeText(await calls.release(next))).toBe('released');
    }
    // Before b: the running call, the one piscina's thread held ready behind it (thread tiers), and a
    // run of at most RUN_LENGTH more on a's worker (a worker's start costs far more than a call, and
    // a run ends sooner if it lasts RUN_MS); then a's worker ends.
    expect(order.indexOf('b')).toBeGreaterThanOrEqual(1);
    expect(order.indexOf('b')).toBeLessThanOrEqual(2 + RUN_LENGTH);
    expect(order.filter((pkg) => pkg === 'a')).toHaveLength(floodSize);
    expect(outcomeText(await single.outcome)).toBe('released');
    expect(calls.most).toBe(1);
    await loadEcho(host);
    await expectHostFine(host);
  });

  it('under contention packages take turns: each runs at most one run of calls on its worker, round-robin, and none starves', async () => {
    const { host, calls } = await hostWith(1, ['a', 'b', 'c']);
    const perPackage = RUN_LENGTH + 4;
    const first = calls.call('a');
    expect(await calls.nextStarted()).toBe(first);
    for (const pkg of ['a', 'b', 'c'])
      for (let index = pkg === 'a' ? 1 : 0; index < perPackage; index += 1) calls.call(pkg);
    // Each started call is let go as it starts, in start order, until every call has answered.
    const order = [first.pkg];
    await calls.release(first);
    while (order.length < 3 * perPackage) {
      const next = await calls.nextStarted();
      order.push(next.pkg);
      expect(outcomeText(await calls.release(next))).toBe('released');
    }
    const runs = runsOf(order);
    const left = new Map(['a', 'b', 'c'].map((pkg) => [pkg, perPackage]));
    for (const [index, [pkg, length]] of runs.entries()) {
      left.set(pkg, (left.get(pkg) ?? 0) - length);
      const others = [...left].filter(([other, count]) => other !== pkg && count > 0).map(([other]) => other);
      if (others.length === 0) break;
      // A run is at most RUN_LENGTH calls started while others wait (fewer if it lasts RUN_MS), the
      // one that got the place included; a's first also has those it started before anyone waited
      // (the one running, and in the thread tiers the one piscina's thread held ready behind it).
      expect(length).toBeLessThanOrEqual(RUN_LENGTH + (index === 0 ? 2 : 0));
      // The next run is the next package in turn that still has calls: none is passed over.
      const turn = ['a', 'b', 'c'];
      const after = [...turn.slice(turn.indexOf(pkg) + 1), ...turn].filter((next) => others.includes(next));
      expect(runs[index + 1]?.[0]).toBe(after[0]);
    }
    expect(calls.most).toBe(1);
    await loadEcho(host);
    await expectHostFine(host);
    // Every switch between packages starts a worker (in the process tier, a sandboxed process):
    // on a loaded 2-core machine that passed the default minute. The bound only catches a hang.
  }, 180_000);

  it('a waiting call’s timeout counts from when it starts, not while it waits', async () => {
    const { host, calls } = await hostWith(1, ['a', 'b']);
    // Never released: it holds the only place until its own timeout, longer than b's.
    const blocker = calls.call('a', { timeoutMs: 2500 });
    await calls.nextStarted();
    const waiting = calls.call('b', { timeoutMs: 1500 });
    expect((await blocker.outcome).error?.code).toBe('TOOL_TIMEOUT');
    expect(await calls.nextStarted()).toBe(waiting);
    expect(outcomeText(await calls.release(waiting))).toBe('released');
    await loadEcho(host);
    await expectHostFine(host);
  });

  it('a call aborted while it waits answers CALL_ABORTED, never runs, and the next call runs', async () => {
    const { host, calls } = await hostWith(1, ['a', 'b']);
    const running = calls.call('a');
    await calls.nextStarted();
    const controller = new AbortController();
    const aborted = calls.call('b', { signal: controller.signal });
    controller.abort();
    expect((await aborted.outcome).error?.code).toBe('CALL_ABORTED');
    expect(outcomeText(await calls.release(running))).toBe('released');
    await calls.runOnce('b');
    expect(calls.started.map((held) => held.callId)).not.toContain(aborted.callId);
    await loadEcho(host);
    await expectHostFine(host);
  });

  it('a call whose worker exits gives its place back: the waiting call of another package runs', async () => {
    const { host, calls } = await hostWith(1, ['a', 'b']);
    const exiting = host.call('exits_a', {});
    const waiting = calls.call('b');
    expect((await exiting).error?.code).toBe('TOOL_EXITED');
    expect(await calls.nextStarted()).toBe(waiting);
    expect(outcomeText(await calls.release(waiting))).toBe('released');
    await calls.runOnce('a');
    expect(calls.most).toBe(1);
    await loadEcho(host);
    await expectHostFine(host);
  });

  it('close() answers a waiting call HOST_CLOSED, and the running one too', async () => {
    const { host, calls } = await hostWith(1, ['a', 'b']);
    const running = calls.call('a');
    await calls.nextStarted();
    const waiting = calls.call('b');
    await host.close();
    expect((await waiting.outcome).error?.code).toBe('HOST_CLOSED');
    expect((await running.outcome).error?.code).toBe('HOST_CLOSED');
    expect(calls.started.map((held) => held.callId)).toEqual([running.callId]);
  });

  it('a script awaiting calls that wait for a place does not exit under them', async () => {
    // In a process of its own: vitest holds this one's event loop. A waiting call must hold it as a
    // running one does; in the process tier, what it waits for (a package process that is ending)
    // held nothing, and Node exited with 13 (a top-level await left unsettled), the calls lost.
    const root = await tempDir('toolhost-budget-script-');
    for (const pkg of ['a', 'b'])
      await writePackage(join(root, pkg), { 'echo.js': toolSource(`echo_${pkg}`, `'${pkg}'`) });
    const index = fileURLToPath(new URL('../dist/src/index.js', import.meta.url));
    const script = join(root, 'alternate.mjs');
    await writeFile(
      script,
      `import { ToolHost, outcomeText } from ${JSON.stringify(index)};
const host = new ToolHost({ isolation: '${tier}', maxWorkers: 1, dataDir: ${JSON.stringify(join(root, 'data'))}, logger: { info() {}, warn() {}, error() {} } });
for (const pkg of ['a', 'b']) await host.load(${JSON.stringify(root)} + '/' + pkg);
const answers = [];
for (let index = 0; index < 6; index++) answers.push(outcomeText(await host.call(index % 2 === 0 ? 'echo_a' : 'echo_b', {})));
console.log(JSON.stringify(answers));
await host.close();
`,
    );
    // The timeout only bounds a hang: six calls, each starting a worker (or a package process).
    const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 120_000 });
    expect(JSON.parse(stdout)).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
  }, 150_000);
});
