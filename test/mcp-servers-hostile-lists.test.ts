/**
 * Hostile MCP servers that attack the declaration read, loaded from one config beside an honest
 * server on one host: a 10,000-tool list, a list whose pages never end, a multi-megabyte
 * description, invisible characters in what the model reads, an `initialize` or `tools/list` that
 * never answers, servers that die at start or keep dying, a flood of `list_changed`, and tools named
 * as another server's. What fails is left out with its
 * reason (and what is fine beside it is offered), the host lives, and the honest server answers.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModuleEvent } from '../dist/src/index.js';
import { answered, FakeClock, nextModuleEvent } from './support/host-harness.js';
import { fixtureEntry, writeServersConfig } from './support/mcp-server-fixtures.js';
import { textOf, useServersHost } from './support/servers-host.js';

const READ_TIMEOUT_MS = 4000;

describe('hostile MCP servers that attack the declaration read, beside an honest one', () => {
  const clock = new FakeClock();
  const servers = useServersHost({ readTimeoutMs: READ_TIMEOUT_MS, clock });
  let config: string;
  /** The status of a server entry of the config, or of one of its tools (`server/tool`). */
  const statusOf = (at: string) => servers.statusOf(`${config}#${at}`);
  let keptDying: Promise<ModuleEvent>;

  beforeAll(async () => {
    config = await writeServersConfig(servers.folder, {
      honest: fixtureEntry('honest'),
      many: fixtureEntry('many-tools'),
      endless: fixtureEntry('many-tools', { env: { PAGE_SIZE: '10', ENDLESS_PAGES: '1' } }),
      huge: fixtureEntry('huge-description'),
      invisible: fixtureEntry('invisible-characters'),
      silentInitialize: fixtureEntry('slow-initialize'),
      silentList: fixtureEntry('slow-initialize', { env: { STALL: 'tools/list' } }),
      deadAtStart: fixtureEntry('crash-at-start'),
      keepsDying: fixtureEntry('crash-at-start', { env: { CRASH_AFTER_LIST: '1' } }),
      announcer: fixtureEntry('list-changed-flood'),
    });
    keptDying = nextModuleEvent(
      servers.host,
      // Left out for good, not for the moment of a restart.
      (event) =>
        event.status.path === `${config}#keepsDying` &&
        event.type === 'left-out' &&
        event.status.reason !== 'it is being restarted',
    );
    await servers.host.load(config);
    await servers.honestFine();
  });

  it('a list of 10,000 tools leaves the server out, naming the bound', () => {
    expect(statusOf('many')).toMatchObject({
      state: 'left-out',
      reason: expect.stringMatching(/more than \d+ tools/),
    });
    expect(servers.host.list().some((tool) => tool.name.startsWith('many_'))).toBe(false);
  });

  it('a list whose pages never end leaves the server out, naming the bound', () => {
    expect(statusOf('endless')).toMatchObject({
      state: 'left-out',
      reason: expect.stringMatching(/\b64\b.*pages|pages.*\b64\b/i),
    });
  });

  it('a multi-megabyte description leaves that tool out, and its neighbour is offered', async () => {
    expect(statusOf('huge/huge_description')).toMatchObject({
      state: 'left-out',
      code: 'DECLARATION_INVALID',
    });
    const listed = servers.host.list().find((tool) => tool.name === 'huge_description');
    expect(listed).toBeUndefined();
    expect(await servers.call('small_neighbour')).toStrictEqual(answered('small and fine'));
    await servers.honestFine();
  });

  it.each([
    'bidi_description',
    'zero_width_description',
    'tags_in_description',
    'tags_in_title',
    'tags_in_schema',
    'control_in_schema_enum',
  ])('invisible or control characters (%s) leave that tool out; it is never offered', async (name) => {
    expect(statusOf(`invisible/${name}`)).toMatchObject({ state: 'left-out', code: 'DECLARATION_INVALID' });
    expect(servers.host.list().map((tool) => tool.name)).not.toContain(name);
    const outcome = await servers.call(name);
    expect(outcome.isError).toBe(true);
    expect(outcome.error?.code).toBe('UNKNOWN_TOOL');
  });

  it('the visible tool beside them is offered and answers', async () => {
    expect(await servers.call('visible_neighbour')).toStrictEqual(answered('plainly visible'));
    await servers.honestFine();
  });

  it('a server whose initialize or tools/list never answers waits for a re-read at 1, 5 and 30 minutes (host clock), then stays out', async () => {
    const silent = [
      ['silentInitialize', /^it did not answer initialize within 4000 ms$/],
      // Within what initialize left of the bound.
      ['silentList', /^it did not list its tools within \d+ ms$/],
    ] as const;
    await clock.untilPending(silent.length);
    for (const delayMs of [60_000, 300_000, 1_800_000]) {
      for (const [at, reason] of silent) {
        expect(statusOf(at)).toMatchObject({
          state: 'reread-pending',
          code: 'DECLARATION_TIMEOUT',
          reason: expect.stringMatching(reason),
          nextRereadAt: clock.now() + delayMs,
        });
      }
      const reread = silent.map(([at]) =>
        nextModuleEvent(servers.host, (event) => event.status.path === `${config}#${at}` && event.reread),
      );
      clock.advance(delayMs);
      await Promise.all(reread);
      expect(servers.host.list().map((tool) => tool.name)).not.toContain('slow_say');
      await servers.honestFine();
    }
    for (const [at, reason] of silent) {
      expect(statusOf(at)).toMatchObject({
        state: 'left-out',
        code: 'DECLARATION_TIMEOUT',
        reason: expect.stringMatching(reason),
      });
    }
  });

  it('a server that dies before reading anything is left out with its exit and last words, never offered', () => {
    expect(statusOf('deadAtStart')).toMatchObject({
      state: 'left-out',
      code: 'SERVER_FAILED',
      reason: expect.stringMatching(/exited with code 9.*dying before reading anything/),
    });
    expect(servers.host.list().map((tool) => tool.name)).not.toContain('crash_say');
  });

  it('a server that keeps dying after its list is restarted with backoff, then left out with its last words', async () => {
    const event = await keptDying;
    // Every start that fails counts: it is left out only once it has ended 5 times.
    expect(event.status.reason).toMatch(/ended 5 times .*exited with code 9.*dying after tools\/list/);
    expect(servers.host.list().map((tool) => tool.name)).not.toContain('crash_say');
    await servers.honestFine();
  });

  it('a flood of 10,000 list_changed notifications is read again at a bounded rate', async () => {
    const secondRead = nextModuleEvent(
      servers.host,
      (event) => event.status.path === `${config}#announcer/read_number_2` && event.type === 'offered',
    );
    expect(await servers.call('flood_list_changed', { count: 10_000 })).toStrictEqual(answered('sent 10000'));
    await secondRead;
    // The first read, the one the flood asked for, and at most one more for what came during it.
    const reads = Number(textOf(await servers.call('list_requests')).replace(/^lists: /, ''));
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(reads).toBeLessThanOrEqual(3);
    await servers.honestFine();
  });

  it("a server listing another server's tool names does not take over their calls", async () => {
    const shadowConfig = await writeServersConfig(
      servers.folder,
      { shadow: fixtureEntry('shadow') },
      'shadow.json',
    );
    await servers.host.load(shadowConfig);
    for (const name of ['echo', 'count']) {
      expect(servers.statusOf(`${shadowConfig}#shadow/${name}`)).toMatchObject({ state: 'left-out' });
    }
    await servers.honestFine();
    expect(JSON.stringify(servers.outcomes)).not.toContain('shadowed');
  });

  it('the config loaded first keeps its names when it is published again (its left-out servers retried)', async () => {
    const shadowConfig = `${servers.folder}/shadow.json`;
    // Loading the unchanged config again retries its servers left out for good, and publishes it
    // anew: its tools must keep their place before the shadow config's, loaded after it.
    await servers.host.load(config);
    for (const name of ['echo', 'count']) {
      expect(servers.statusOf(`${shadowConfig}#shadow/${name}`)).toMatchObject({
        state: 'left-out',
        code: 'NAME_TAKEN',
      });
    }
    await servers.honestFine();
    expect(JSON.stringify(servers.outcomes)).not.toContain('shadowed');
  });
});
