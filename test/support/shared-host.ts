/**
 * One host for a whole catalogue of attacks in one tier: made before the first case, closed after
 * the last. Each case runs on the host every earlier attack left behind, so a catalogue also proves
 * the host recovers from dozens of attacks in a row. The cases still check, after each attack, that
 * the next call of that tool and another package (echo) are fine.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  type LoadReport,
  ToolHost,
  type ToolHostEvents,
  type ToolHostOptions,
} from '../../dist/src/index.js';
import { fixtureModule, type LogLine, type RecordingLogger, recordingLogger } from './host-harness.js';

export interface SharedHost {
  /** The host of this tier; defined from `beforeAll` on. */
  readonly host: ToolHost;
  readonly logger: RecordingLogger;
  /**
   * Loads `path` (a module or a package) unless it is the one loaded last, and unloads the one
   * before it, so that only echo and the tool under attack hold workers or processes.
   */
  use(path: string): Promise<void>;
  /** {@link SharedHost.use} without the check that everything loaded is offered: the load's report. */
  load(path: string): Promise<LoadReport>;
  /** What reached the logger from now on (earlier attacks logged their own lines). */
  linesFromNow(): () => LogLine[];
  /** Collects every event of `type` from now until the next `use` or `load` (the next case). */
  collect<K extends keyof ToolHostEvents>(type: K): Array<ToolHostEvents[K][0]>;
}

/** Registers `beforeAll`/`afterAll` in the calling `describe` for one host made with `options`. */
export function useSharedHost(options: Omit<ToolHostOptions, 'dataDir' | 'logger'> = {}): SharedHost {
  let made: { host: ToolHost; dataDir: string } | undefined;
  const logger = recordingLogger();
  let current: string | undefined;
  let last: LoadReport | undefined;
  const listeners: Array<() => void> = [];

  beforeAll(async () => {
    const dataDir = await realpath(await mkdtemp(join(tmpdir(), 'toolhost-test-')));
    made = { host: new ToolHost({ isolation: 'worker', ...options, dataDir, logger }), dataDir };
    const report = await made.host.load(fixtureModule('echo.js'));
    expect(report.modules.map((module) => module.state)).toEqual(['offered']);
  });
  afterAll(async () => {
    if (made === undefined) return;
    await made.host.close();
    await rm(made.dataDir, { recursive: true, force: true });
  });

  const shared: SharedHost = {
    get host() {
      if (made === undefined) throw new Error('the shared host is made in beforeAll');
      return made.host;
    },
    logger,
    async use(path) {
      const report = await shared.load(path);
      expect(report.modules.map((module) => module.state).every((state) => state === 'offered')).toBe(true);
    },
    async load(path) {
      // The listeners of the case before are gone: a later case's events never reach its arrays.
      for (const off of listeners.splice(0)) off();
      if (current === path && last !== undefined) return last;
      if (current !== undefined) shared.host.unload(current);
      current = undefined;
      last = await shared.host.load(path);
      current = path;
      return last;
    },
    linesFromNow() {
      const mark = logger.lines.length;
      return () => logger.lines.slice(mark);
    },
    collect(type) {
      const seen: Array<ToolHostEvents[typeof type][0]> = [];
      const listener = ((event: ToolHostEvents[typeof type][0]) => seen.push(event)) as never;
      shared.host.on(type, listener);
      listeners.push(() => shared.host.off(type, listener));
      return seen;
    },
  };
  return shared;
}
