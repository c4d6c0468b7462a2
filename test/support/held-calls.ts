/**
 * Calls of the budget fixtures' `held_<package>` tools (fixtures/budget): each says when it starts
 * running (its tmpDir, and a token of the worker it runs on) and holds its worker until the test lets
 * it go; the host's `workers` events are recorded beside them.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  outcomeText,
  type ToolHost,
  type ToolOutcome,
  type WorkerBudgetEvent,
} from '../../dist/src/index.js';
import { writePackage } from './tool-packages.js';

export const HELD = readFileSync(new URL('../../fixtures/budget/held.js', import.meta.url), 'utf8');
export const EXITS = readFileSync(new URL('../../fixtures/budget/exits.js', import.meta.url), 'utf8');

/** What the test sees of one call: its outcome, and (once it runs) its tmpDir and worker. */
export interface Held {
  callId: string;
  pkg: string;
  outcome: Promise<ToolOutcome>;
  tmpDir?: string;
  worker?: string;
}

/** Calls of the packages' `held_*` tools, in the order they start running, and the host's worker counts. */
export class Calls {
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

/** A package `pkg` in `root` with the two budget fixtures, `held_<pkg>` and `exits_<pkg>`. */
export async function writeHeldPackage(
  root: string,
  pkg: string,
  extra: Record<string, string> = {},
): Promise<string> {
  const tools = { 'held.js': HELD.replace('NAME', pkg), 'exits.js': EXITS.replace('NAME', pkg) };
  await writePackage(join(root, pkg), tools);
  for (const [file, text] of Object.entries(extra)) await writeFile(join(root, pkg, file), text);
  return join(root, pkg);
}
