/**
 * What the host suites share: hosts made on a real temp dataDir with a recording logger (closed after
 * each test), fixture paths, a fake clock for the re-read schedule, event handshakes, and the checks
 * that a host and a pool are still fine after a hostile call.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import {
  type LoadReport,
  type Logger,
  type ModuleEvent,
  type ModuleStatus,
  ToolHost,
  type ToolHostEvents,
  type ToolHostOptions,
  type ToolOutcome,
} from '../../dist/src/index.js';
import type { Clock } from '../../dist/src/registry/reread-schedule.js';
import { generatedModule, isGeneratedModule } from './generated-modules.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The real path of a module under fixtures/modules (what `host.status()` reports), or of the
 * generated module of that name (test/support/generated-modules.ts) for a family of near-copies.
 */
export function fixtureModule(file: string): string {
  if (isGeneratedModule(file)) return generatedModule(file);
  return join(repoRoot, 'fixtures', 'modules', file);
}

/** The folder of a package under fixtures/host-packages. */
export function hostPackage(name: string): string {
  return join(repoRoot, 'fixtures', 'host-packages', name);
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
}

export interface RecordingLogger extends Logger {
  readonly lines: LogLine[];
  /** The lines of one level whose message contains `text`. */
  matching(level: LogLine['level'], text: string): string[];
}

export function recordingLogger(): RecordingLogger {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
    matching: (level, text) =>
      lines.filter((line) => line.level === level && line.message.includes(text)).map((line) => line.message),
  };
}

export interface TestHost {
  host: ToolHost;
  logger: RecordingLogger;
  /** The host's dataDir: a fresh real temp folder. */
  dataDir: string;
}

export type HostMaker = (options?: Omit<ToolHostOptions, 'dataDir' | 'logger'>) => Promise<TestHost>;

/** Returns a maker of hosts; every host it made is closed (and its dataDir removed) after each test. */
export function useHosts(): HostMaker {
  const made: TestHost[] = [];
  afterEach(async () => {
    const closing = made.splice(0);
    await Promise.all(
      closing.map(async ({ host, dataDir }) => {
        await host.close();
        await rm(dataDir, { recursive: true, force: true });
      }),
    );
  });
  return async (options = {}) => {
    const dataDir = await realpath(await mkdtemp(join(tmpdir(), 'toolhost-test-')));
    const logger = recordingLogger();
    // The worker tier unless a suite names another: the default (the process tier) is its own suite's.
    const host = new ToolHost({ isolation: 'worker', ...options, dataDir, logger });
    const testHost = { host, logger, dataDir };
    made.push(testHost);
    return testHost;
  };
}

/** A module status less the fields other suites check: its `version` and its `isolation`. */
type ComparedStatus = Omit<ModuleStatus, 'version' | 'isolation'>;

/**
 * A module status without its `version` (a content hash) and its `isolation` (the tier its package
 * got), other suites' concerns, so these suites can compare every other field exactly.
 */
export function statusOf(status: ModuleStatus | undefined): ComparedStatus | undefined {
  if (status === undefined) return undefined;
  const { version: _version, isolation: _isolation, ...rest } = status;
  return rest;
}

/** {@link statusOf} for a list, e.g. a load report's modules. */
export function statusesOf(statuses: readonly ModuleStatus[]): ComparedStatus[] {
  return statuses.map((status) => statusOf(status) as ComparedStatus);
}

/**
 * The outcome of a call that failed with `code`: the model sees exactly `message`. The error may
 * also carry the tool's `stack` (for the host only); suites about locations check it.
 */
export function failed(code: string, message: string): ToolOutcome {
  return {
    content: [{ type: 'text', text: message }],
    isError: true,
    error: expect.objectContaining({ code, message }),
  } as ToolOutcome;
}

/** The outcome of a call that answered `text`. */
export function answered(text: string): ToolOutcome {
  return { content: [{ type: 'text', text }], isError: false };
}

/** The text of a one-text-block outcome, parsed as JSON. */
export function jsonOf(outcome: ToolOutcome): unknown {
  expect(outcome.isError).toBe(false);
  expect(outcome.content).toHaveLength(1);
  const [block] = outcome.content;
  if (block?.type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(outcome)}`);
  return JSON.parse(block.text);
}

/** Loads fixtures/modules/echo.js, the well-behaved tool used to show a host is still fine. */
export async function loadEcho(host: ToolHost): Promise<void> {
  const report = await host.load(fixtureModule('echo.js'));
  expect(report.modules.map((module) => module.state)).toEqual(['offered']);
}

/** The host still serves calls: echo (in a pool of its own) answers exactly. */
export async function expectHostFine(host: ToolHost, text = 'still fine'): Promise<void> {
  const outcome = await host.call('echo', { text }, { callId: 'health_check', sessionId: 'health' });
  expect(outcome).toStrictEqual(
    answered(JSON.stringify({ echoed: text, callId: 'health_check', sessionId: 'health', withheld: [] })),
  );
}

/** Resolves with the next event of `type` that satisfies `accept`; subscribe before acting. */
export function nextEvent<K extends keyof ToolHostEvents>(
  host: ToolHost,
  type: K,
  accept: (...args: ToolHostEvents[K]) => boolean = () => true,
): Promise<ToolHostEvents[K]> {
  return new Promise((resolve) => {
    const listener = (...args: ToolHostEvents[K]) => {
      if (!accept(...args)) return;
      host.off(type, listener as never);
      resolve(args);
    };
    host.on(type, listener as never);
  });
}

/** Resolves with the next 'module' event that satisfies `accept`. */
export async function nextModuleEvent(
  host: ToolHost,
  accept: (event: ModuleEvent) => boolean,
): Promise<ModuleEvent> {
  const [event] = await nextEvent(host, 'module', accept);
  return event;
}

/** Collects every event of `type` a host emits from now on. */
export function collect<K extends keyof ToolHostEvents>(
  host: ToolHost,
  type: K,
): Array<ToolHostEvents[K][0]> {
  const seen: Array<ToolHostEvents[K][0]> = [];
  host.on(type, ((event: ToolHostEvents[K][0]) => seen.push(event)) as never);
  return seen;
}

interface PendingSleep {
  ms: number;
  until: number;
  resolve(): void;
}

/**
 * A clock the test moves by hand. `sleep` resolves only when the test advances past its end, and
 * rejects when its signal aborts (a cancelled schedule), as the contract of {@link Clock} says.
 */
export class FakeClock implements Clock {
  #now = 1_700_000_000_000;
  readonly #sleeps = new Set<PendingSleep>();
  #onSleep: Array<() => void> = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const sleep: PendingSleep = { ms, until: this.#now + ms, resolve };
      this.#sleeps.add(sleep);
      for (const wake of this.#onSleep.splice(0)) wake();
      signal.addEventListener(
        'abort',
        () => {
          this.#sleeps.delete(sleep);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Resolves once at least `count` sleeps are waiting (a re-read schedule starts a moment after a load). */
  async untilPending(count = 1): Promise<void> {
    while (this.#sleeps.size < count) await new Promise<void>((wake) => this.#onSleep.push(wake));
  }

  /** The lengths of the sleeps still waiting, in the order they were asked for. */
  get pendingSleeps(): number[] {
    return [...this.#sleeps].map((sleep) => sleep.ms);
  }

  /** Moves time forward by `ms`, waking every sleep that ends by then. */
  advance(ms: number): void {
    this.#now += ms;
    for (const sleep of [...this.#sleeps]) {
      if (sleep.until <= this.#now) {
        this.#sleeps.delete(sleep);
        sleep.resolve();
      }
    }
  }
}

/** Every module of a load was left out, each with `code` and `reason`. */
export function expectAllLeftOut(report: LoadReport, code: string, reason: string): void {
  expect(report.modules.length).toBeGreaterThan(0);
  for (const module of report.modules) expect(module).toMatchObject({ state: 'left-out', code, reason });
}
