/**
 * The host-wide worker budget (`maxWorkers`): the host never runs more workers than it (threads in
 * the thread tiers, package processes in the process tier), idle packages' workers are ended least
 * recently used first to make room, calls beyond it take turns across packages, a waiting call's
 * timeout counts from when it starts, and every way a call leaves (answered, aborted while waiting,
 * the host closing, its worker exiting) lets the next one run.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type IsolationTier,
  outcomeText,
  type ToolHost,
  type ToolOutcome,
  type WorkerBudgetEvent,
} from '../dist/src/index.js';
import { expectHostFine, loadEcho, useHosts } from './support/host-harness.js';
import { tempDir, writePackage } from './support/tool-packages.js';

const HELD = readFileSync(new URL('../fixtures/budget/held.js', import.meta.url), 'utf8');
const EXITS = readFileSync(new URL('../fixtures/budget/exits.js', import.meta.url), 'utf8');

/** What the test sees of one call: its outcome, and (once it runs) its tmpDir and worker. */
interface Held {
  callId: string;
  pkg: string;
  outcome: Promise<ToolOutcome>;
  tmpDir?: string;
  worker?: string;
}

/** Calls of the packages' `held_*` tools, in the order they start running, and the host's worker counts. */
class Calls {
  readonly started: Held[] = [];
  readonly events: WorkerBudgetEvent[] = [];
  readonly #byId = new Map<string, Held>();
  readonly #onStart: Array<() => void> = [];
  #next = 0;

  constructor(readonly host: ToolHost) {
    host.on('workers', (event) => this.events.push(event));
    host.on('progress', ({ callId, data }) => {
      const held = this.#byId.get(callId);
      const report = data as { tmpDir: string; worker: string };
      if (held === undefined || held.tmpDir !== undefined) return;
      held.tmpDir = report.tmpDir;
      held.worker = report.worker;
      this.started.push(held);
      for (const wake of this.#onStart.splice(0)) wake();
    });
  }

  call(pkg: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Held {
    const callId = `${pkg}_${this.#byId.size + 1}`;
    const outcome = this.host.call(`held_${pkg}`, {}, { ...options, callId });
    const held: Held = { callId, pkg, outcome };
    this.#byId.set(callId, held);
    return held;
  }

  /** The next call to start running (in start order). */
  async nextStarted(): Promise<Held> {
    while (this.started.length <= this.#next) await new Promise<void>((wake) => this.#onStart.push(wake));
    return this.started[this.#next++] as Held;
  }

  /** Lets a running call answer, and waits for its answer. */
  async release(held: Held): Promise<ToolOutcome> {
    await writeFile(join(held.tmpDir as string, 'go'), '');
    return held.outcome;
  }

  /** Runs one call of `pkg` to its end. */
  async runOnce(pkg: string): Promise<Held> {
    const held = this.call(pkg);
    expect(await this.nextStarted()).toBe(held);
    expect(outcomeText(await this.release(held))).toBe('released');
    return held;
  }

  /** The most workers the host ran at once, by its own events. */
  get most(): number {
    return Math.max(0, ...this.events.map((event) => event.workers));
  }
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
      const tools = { 'held.js': HELD.replace('NAME', pkg), 'exits.js': EXITS.replace('NAME', pkg) };
      await writePackage(join(root, pkg), tools);
      const report = await host.load(join(root, pkg));
      expect(report.modules.map((module) => module.state)).toEqual(['offered', 'offered']);
    }
    return { host, root, calls: new Calls(host) };
  }

  it('ends the least recently used idle package’s worker to make room, and never runs more than the budget', async () => {
    const { host, root, calls } = await hostWith(2, ['a', 'b', 'c']);
    const a = await calls.runOnce('a');
    await calls.runOnce('b');
    // a is used again: b is now the least recently used.
    expect((await calls.runOnce('a')).worker).toBe(a.worker);
    const endedBefore = calls.events.filter((event) => event.type === 'ended').length;
    await calls.runOnce('c');
    const ended = calls.events.filter((event) => event.type === 'ended').slice(endedBefore);
    expect(ended.map((event) => event.source)).toEqual([join(root, 'b')]);
    // a kept its worker.
    expect((await calls.runOnce('a')).worker).toBe(a.worker);
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

  it('a package that floods calls can’t starve another: its call starts within one run of the other’s calls', async () => {
    const { host, calls } = await hostWith(1, ['a', 'b']);
    const flood = Array.from({ length: 12 }, () => calls.call('a'));
    const first = await calls.nextStarted();
    expect(first).toBe(flood[0]);
    const single = calls.call('b');
    // Each started call is let go as it starts, in start order, until every call has answered.
    const order: string[] = [first.pkg];
    await calls.release(first);
    for (let index = 1; index < 13; index += 1) {
      const next = await calls.nextStarted();
      order.push(next.pkg);
      expect(outcomeText(await calls.release(next))).toBe('released');
    }
    // Before b: the running call, the one piscina's thread held ready behind it (thread tiers), and a
    // run of 4 more on a's worker (a worker's start costs far more than a call); then a's worker ends.
    expect(order.indexOf('b')).toBeGreaterThanOrEqual(1);
    expect(order.indexOf('b')).toBeLessThanOrEqual(6);
    expect(order.filter((pkg) => pkg === 'a')).toHaveLength(12);
    expect(outcomeText(await single.outcome)).toBe('released');
    expect(calls.most).toBe(1);
    await loadEcho(host);
    await expectHostFine(host);
  });

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
});
