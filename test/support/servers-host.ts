/**
 * One host for a catalogue of hostile MCP servers, made before the first case and closed after the
 * last, with a temp folder for its configs and grants. Every call goes through {@link ServersHost.call},
 * which keeps each outcome, so a suite can check at its end that a secret never reached any of them.
 * `honestFine` shows the honest server (fixtures/mcp-servers/honest.mjs, loaded beside the attacks)
 * still answers and was never restarted: its `count` goes on from where it was.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type ModuleStatus, ToolHost, type ToolHostOptions, type ToolOutcome } from '../../dist/src/index.js';
import { answered, type RecordingLogger, recordingLogger } from './host-harness.js';

export interface ServersHost {
  /** Defined from `beforeAll` on. */
  readonly host: ToolHost;
  readonly logger: RecordingLogger;
  /** A fresh real temp folder for configs, grants and secrets, removed after the suite. */
  readonly folder: string;
  /** Every outcome a call through {@link ServersHost.call} answered, in order. */
  readonly outcomes: ToolOutcome[];
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: Parameters<ToolHost['call']>[2],
  ): Promise<ToolOutcome>;
  /** The honest server answers `echo`, and its `count` is one more than the last time. */
  honestFine(): Promise<void>;
  /** The status of a config's server entry (`<config>#<server>`) or of one of its tools (`…/<tool>`). */
  statusOf(path: string): ModuleStatus | undefined;
}

/** Registers `beforeAll`/`afterAll` in the calling `describe` for one host made with `options`. */
export function useServersHost(options: Omit<ToolHostOptions, 'dataDir' | 'logger'> = {}): ServersHost {
  let made: { host: ToolHost; dataDir: string; folder: string } | undefined;
  const logger = recordingLogger();
  const outcomes: ToolOutcome[] = [];
  let honestCount = 0;

  beforeAll(async () => {
    const dataDir = await realpath(await mkdtemp(join(tmpdir(), 'toolhost-test-')));
    const folder = await realpath(await mkdtemp(join(tmpdir(), 'toolhost-servers-')));
    made = { host: new ToolHost({ ...options, dataDir, logger }), dataDir, folder };
  });
  afterAll(async () => {
    if (made === undefined) return;
    await made.host.close();
    await rm(made.dataDir, { recursive: true, force: true });
    await rm(made.folder, { recursive: true, force: true });
  });

  const madeYet = () => {
    if (made === undefined) throw new Error('the servers host is made in beforeAll');
    return made;
  };
  const servers: ServersHost = {
    get host() {
      return madeYet().host;
    },
    get folder() {
      return madeYet().folder;
    },
    logger,
    outcomes,
    async call(name, args = {}, callOptions) {
      const outcome = await servers.host.call(name, args, callOptions);
      outcomes.push(outcome);
      return outcome;
    },
    async honestFine() {
      expect(await servers.call('echo', { text: 'fine' })).toStrictEqual(answered('echo: fine'));
      honestCount += 1;
      expect(await servers.call('count')).toStrictEqual(answered(`count: ${honestCount}`));
    },
    statusOf(path) {
      return servers.host.status().find((status) => status.path === path);
    },
  };
  return servers;
}

/** The one text block of an outcome (an error's message included). */
export function textOf(outcome: ToolOutcome): string {
  expect(outcome.content).toHaveLength(1);
  const [block] = outcome.content;
  if (block?.type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(outcome)}`);
  return block.text;
}
