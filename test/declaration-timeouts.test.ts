/**
 * Declaration reads that run over their time bound: the module is left out for now, re-read after
 * 1, 5 and 30 minutes of the host's clock (a fake one here, moved by the test), and after the last
 * re-read it stays out. The reads themselves really run (and really time out) in throwaway workers.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REREAD_DELAYS_MS } from '../dist/src/registry/reread-schedule.js';
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
import { removeDir, tempDir } from './support/tool-packages.js';

const makeHost = useHosts();

// Long enough for echo.js to be read on a loaded machine; the hostile reads always use all of it.
const READ_TIMEOUT_MS = 2_000;
const TIMED_OUT_REASON = `reading the declaration took longer than ${READ_TIMEOUT_MS} ms`;

function expectLoggedOnce(lines: string[], start: string): void {
  expect(lines).toHaveLength(1);
  expect(lines[0]?.startsWith(start)).toBe(true);
}

describe('a declaration read that runs over its time bound', () => {
  it('a name that loops forever is left out for now and re-read after 1, 5 and 30 minutes; after the last it stays out', async () => {
    const clock = new FakeClock();
    const { host, logger } = await makeHost({ readTimeoutMs: READ_TIMEOUT_MS, clock });
    await loadEcho(host);
    const path = fixtureModule('decl-name-loops.js');
    const pending = (nextRereadAt: number) => ({
      path,
      source: path,
      state: 'reread-pending',
      code: 'DECLARATION_TIMEOUT',
      reason: TIMED_OUT_REASON,
      nextRereadAt,
    });
    expect(DEFAULT_REREAD_DELAYS_MS).toEqual([60_000, 300_000, 1_800_000]);
    const start = clock.now();

    let scheduled = nextModuleEvent(host, (event) => event.type === 'reread-pending');
    const report = await host.load(path);
    expect(report.modules.map((module) => [module.state, module.code])).toEqual([
      ['reread-pending', 'DECLARATION_TIMEOUT'],
    ]);
    expect(statusOf((await scheduled).status)).toStrictEqual(pending(start + 60_000));
    expect(statusOf(host.status().find((status) => status.path === path))).toStrictEqual(
      pending(start + 60_000),
    );
    expect(clock.pendingSleeps).toEqual([60_000]);
    expect(host.list().map((tool) => tool.name)).toEqual(['echo']);
    await expectHostFine(host);

    // After 1 minute: read again (it times out again), next re-read 5 minutes later.
    scheduled = nextModuleEvent(host, (event) => event.type === 'reread-pending');
    clock.advance(60_000);
    expect(statusOf((await scheduled).status)).toStrictEqual(pending(start + 60_000 + 300_000));
    expect(clock.pendingSleeps).toEqual([300_000]);

    // After 5 more minutes: read again, next re-read 30 minutes later.
    scheduled = nextModuleEvent(host, (event) => event.type === 'reread-pending');
    clock.advance(300_000);
    expect(statusOf((await scheduled).status)).toStrictEqual(pending(start + 360_000 + 1_800_000));
    expect(clock.pendingSleeps).toEqual([1_800_000]);

    // After 30 more minutes: the last re-read also times out, and the module stays out for good.
    const gaveUp = nextModuleEvent(
      host,
      (event) => event.status.path === path && event.type !== 'reread-pending',
    );
    clock.advance(1_800_000);
    const stayedOut = {
      path,
      source: path,
      state: 'left-out',
      code: 'DECLARATION_TIMEOUT',
      reason: TIMED_OUT_REASON,
    };
    expect(statusOf((await gaveUp).status)).toStrictEqual(stayedOut);
    expect(statusOf(host.status().find((status) => status.path === path))).toStrictEqual(stayedOut);
    expect(clock.pendingSleeps).toEqual([]);
    clock.advance(24 * 60 * 60 * 1000);
    expect(clock.pendingSleeps).toEqual([]);
    expect(statusOf(host.status().find((status) => status.path === path))).toStrictEqual(stayedOut);
    expect(host.list().map((tool) => tool.name)).toEqual(['echo']);

    expectLoggedOnce(logger.matching('warn', path), `left out ${path}: ${TIMED_OUT_REASON}`);
    await expectHostFine(host);
  });

  it.each([
    ['a top-level infinite loop', 'decl-top-level-loop.js'],
    ['a top-level await that never resolves', 'decl-top-level-await.js'],
  ])(
    '%s is left out for now with a re-read pending, the host still serves calls, and close cancels the re-read',
    async (_behaviour, file) => {
      const clock = new FakeClock();
      const { host, logger } = await makeHost({ readTimeoutMs: READ_TIMEOUT_MS, clock });
      await loadEcho(host);
      const path = fixtureModule(file);

      const scheduled = nextModuleEvent(host, (event) => event.type === 'reread-pending');
      await host.load(path);

      const pending = {
        path,
        source: path,
        state: 'reread-pending',
        code: 'DECLARATION_TIMEOUT',
        reason: TIMED_OUT_REASON,
        nextRereadAt: clock.now() + 60_000,
      };
      expect(statusOf((await scheduled).status)).toStrictEqual(pending);
      expect(statusesOf(host.status()).filter((status) => status.path === path)).toStrictEqual([pending]);
      expectLoggedOnce(logger.matching('warn', path), `left out ${path}: ${TIMED_OUT_REASON}`);
      await expectHostFine(host);

      await host.close();
      expect(clock.pendingSleeps).toEqual([]);
    },
  );
});

describe('the first report of a timed-out read', () => {
  // Skipped until src/registry/reread-schedule.ts stops running its first attempt inside the constructor: today
  // onScheduled rebuilds before `read.schedule` is set, so the module is first reported (event and log
  // line) as left out for good, without "; it will be read again later".
  it('says a re-read is pending: no transient left-out event, and the log line says it will be read again', async () => {
    const clock = new FakeClock();
    const { host, logger } = await makeHost({ readTimeoutMs: READ_TIMEOUT_MS, clock });
    const path = fixtureModule('decl-top-level-loop.js');
    const events: string[] = [];
    host.on('module', (event) => events.push(`${event.type}:${event.status.state}`));

    await host.load(path);

    expect(events).toEqual(['reread-pending:reread-pending']);
    expect(logger.matching('warn', path)).toEqual([
      `left out ${path}: ${TIMED_OUT_REASON}; it will be read again later`,
    ]);
  });
});

describe('a declaration read blocked where terminating its worker does not end it', () => {
  it('a module whose import blocks opening a FIFO nobody writes is left out at its time bound, and the host serves on', async () => {
    const dir = await tempDir('toolhost-fifo-');
    const fifo = join(dir, 'nobody-writes');
    execFileSync('mkfifo', [fifo]);
    const path = join(dir, 'blocks-on-a-fifo.js');
    await writeFile(
      path,
      [
        "import { readFileSync } from 'node:fs';",
        `readFileSync(${JSON.stringify(fifo)});`,
        "export const name = 'blocks_on_a_fifo';",
        "export const description = 'Never gets past its import';",
        "export const parameterSchema = { type: 'object' };",
        'export function run() { return "unreachable"; }',
        '',
      ].join('\n'),
    );
    const { host } = await makeHost({ readTimeoutMs: READ_TIMEOUT_MS });
    try {
      await loadEcho(host);
      const report = await host.load(path);
      expect(report.modules.map((module) => [module.state, module.code, module.reason])).toEqual([
        ['reread-pending', 'DECLARATION_TIMEOUT', TIMED_OUT_REASON],
      ]);
      await expectHostFine(host);
      await host.close();
    } finally {
      // Opening the FIFO for writing lets the blocked thread's open return, so it can end.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // No reader left: nothing is blocked on it.
      }
      await removeDir(dir);
    }
  });
});
