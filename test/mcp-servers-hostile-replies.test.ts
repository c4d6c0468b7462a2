/**
 * Hostile MCP servers that break the protocol while calls run, loaded from one config beside an
 * honest server on one host: forged, duplicate and malformed replies, a result over the output
 * budget or over the bound on one message, floods of log and progress messages, garbage and an
 * endless line on stdout, a stderr flood, exits mid-call, silence, and requests to the client it
 * must refuse. Each attack gets an error result (or is contained), the host lives, the attacked
 * server answers its next call, and the honest server answers without ever having been restarted.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ToolOutputEvent, ToolProgressEvent } from '../dist/src/index.js';
import { answered, failed } from './support/host-harness.js';
import {
  FLOOD_MARKER,
  fixtureEntry,
  GARBAGE_MARKER,
  writeServersConfig,
} from './support/mcp-server-fixtures.js';
import { textOf, useServersHost } from './support/servers-host.js';

const MB = 1024 * 1024;

describe('hostile MCP servers that break the protocol during calls, beside an honest one', () => {
  const servers = useServersHost({ timeoutGraceMs: 500, outputBudgetBytes: 4096 });
  let rootsFolder: string;

  beforeAll(async () => {
    rootsFolder = join(servers.folder, 'roots');
    await mkdir(rootsFolder);
    const config = await writeServersConfig(servers.folder, {
      honest: fixtureEntry('honest'),
      forged: fixtureEntry('forged-replies', { toolhost: { timeoutMs: 5000 } }),
      garbage: fixtureEntry('stdout-garbage', { toolhost: { timeoutMs: 3000 } }),
      flood: fixtureEntry('stderr-flood'),
      exits: fixtureEntry('exit-mid-call', { toolhost: { timeoutMs: 50_000 } }),
      silent: fixtureEntry('never-answers', { toolhost: { timeoutMs: 1000 } }),
      // The same server again, its tools prefixed: a call after a freeze waits for the restart
      // within its own timeout, which must leave room for one on a busy machine.
      frozen: fixtureEntry('never-answers', { toolhost: { timeoutMs: 8000, prefix: 'frozen' } }),
      asks: fixtureEntry('asks-client', { toolhost: { read: [rootsFolder] } }),
      huge: fixtureEntry('huge-result'),
      noisy: fixtureEntry('notification-flood'),
    });
    const report = await servers.host.load(config);
    expect(report.modules.filter((module) => module.state !== 'offered')).toEqual([]);
    await servers.honestFine();
  });

  it('replies to ids never sent reach nobody: the call gets its own answer', async () => {
    expect(await servers.call('reply_to_unknown_ids')).toStrictEqual(
      answered('answered after forged replies'),
    );
    expect(await servers.call('reply_plainly')).toStrictEqual(answered('plain answer'));
    await servers.honestFine();
  });

  it('a second reply to one call is dropped: the call keeps the first, the next call gets its own', async () => {
    expect(await servers.call('reply_twice')).toStrictEqual(answered('first reply'));
    expect(await servers.call('reply_plainly')).toStrictEqual(answered('plain answer'));
    await servers.honestFine();
  });

  it.each([
    'content-not-array',
    'text-not-string',
    'unknown-block',
    'is-error-not-boolean',
    'bad-image',
    'result-null',
    'result-and-error',
    'error-not-object',
    'no-jsonrpc-field',
    'deep-structured-content',
    'deep-meta',
  ])('a malformed reply (%s) is TOOL_BAD_RESULT at once, in one line', async (shape) => {
    // At once: the entry's timeout is 5 s, so a reply dropped unheard would answer TOOL_TIMEOUT.
    const outcome = await servers.call('reply_wrong_shape', { shape });
    expect(outcome.isError).toBe(true);
    expect(outcome.error?.code).toBe('TOOL_BAD_RESULT');
    expect(textOf(outcome)).not.toContain('\n');
    expect(await servers.call('reply_plainly')).toStrictEqual(answered('plain answer'));
    await servers.honestFine();
  });

  it('a 3 MB result is cut head and tail to the output budget, and kept whole under dataDir', async () => {
    const outcome = await servers.call('huge_result', { kilobytes: 3000 });
    expect(outcome.isError).toBe(false);
    const text = textOf(outcome);
    expect(text.startsWith('head')).toBe(true);
    expect(text.endsWith('tail')).toBe(true);
    expect(text).toContain(`bytes cut by toolhost; full output: ${outcome.fullOutputPath}`);
    expect(Buffer.byteLength(text)).toBeLessThan(4096 + 256);
    const kept = await readFile(outcome.fullOutputPath as string, 'utf8');
    expect(kept).toBe(`head${'.'.repeat(3000 * 1024 - 8)}tail`);
    await servers.honestFine();
  });

  it('a flood of 20,000 log messages during a call is held to maxLogChars, the rest counted as dropped', async () => {
    const heard: ToolOutputEvent[] = [];
    const outcome = await servers.call(
      'flood_notifications',
      { kind: 'logs', count: 20_000 },
      { onOutput: (event) => heard.push(event) },
    );
    expect(outcome).toStrictEqual(answered('flooded'));
    const keptChars = heard.flatMap((event) => event.logs).reduce((sum, log) => sum + log.text.length, 0);
    expect(keptChars).toBeGreaterThan(0);
    expect(keptChars).toBeLessThanOrEqual(65_536);
    expect(heard.at(-1)?.droppedChars).toBeGreaterThan(0);
    await servers.honestFine();
  });

  it('a flood of 20,000 progress notifications reaches the host as its first 1000, in order', async () => {
    const heard: ToolProgressEvent[] = [];
    const listen = (event: ToolProgressEvent) => heard.push(event);
    servers.host.on('progress', listen);
    try {
      expect(await servers.call('flood_notifications', { kind: 'progress', count: 20_000 })).toStrictEqual(
        answered('flooded'),
      );
    } finally {
      servers.host.off('progress', listen);
    }
    expect(heard.map((event) => event.data)).toEqual(
      Array.from({ length: 1000 }, (_, index) => ({ progress: index + 1, message: `step ${index + 1}` })),
    );
    await servers.honestFine();
  });

  it('a progress notification of 2 MB never reaches the host whole', async () => {
    const heard: ToolProgressEvent[] = [];
    const listen = (event: ToolProgressEvent) => heard.push(event);
    servers.host.on('progress', listen);
    try {
      expect(
        await servers.call('flood_notifications', { kind: 'huge-progress', kilobytes: 2048 }),
      ).toStrictEqual(answered('flooded'));
    } finally {
      servers.host.off('progress', listen);
    }
    for (const event of heard) expect(JSON.stringify(event.data).length).toBeLessThanOrEqual(64 * 1024);
    await servers.honestFine();
  });

  it('a result over the 8 MiB bound on one message is TOOL_BAD_RESULT at once, saying so', async () => {
    // At once: the entry's timeout is the default 30 s.
    expect(await servers.call('huge_result', { kilobytes: 9000 })).toStrictEqual(
      failed('TOOL_BAD_RESULT', 'the MCP server sent a malformed reply: a reply over the 8 MiB bound'),
    );
    expect(await servers.call('huge_result', { kilobytes: 1 })).toMatchObject({ isError: false });
    await servers.honestFine();
  });

  it('garbage on stdout between frames is dropped, and the call answers', async () => {
    expect(await servers.call('write_garbage')).toStrictEqual(answered('answered after garbage'));
    expect(await servers.call('garbage_say')).toStrictEqual(answered('still here'));
    await servers.honestFine();
  });

  it('a line on stdout that never ends is not held: the call times out and the host stays flat', async () => {
    const before = process.memoryUsage.rss();
    const outcome = await servers.call('write_endless_line', { megabytes: 24 });
    expect(outcome).toStrictEqual(failed('TOOL_TIMEOUT', 'tool timed out after 3000 ms'));
    expect(process.memoryUsage.rss() - before).toBeLessThan(100 * MB);
    expect(textOf(outcome)).not.toContain(GARBAGE_MARKER);
    await servers.honestFine();
  });

  it('a stderr flood of 20 MB neither blocks the server nor grows the host', async () => {
    const before = process.memoryUsage.rss();
    expect(await servers.call('flood_stderr', { megabytes: 20 })).toStrictEqual(answered('flooded 20 MB'));
    expect(process.memoryUsage.rss() - before).toBeLessThan(100 * MB);
    await servers.honestFine();
  });

  it('a server that floods stderr and exits is TOOL_CRASHED with its last words, bounded, then restarted', async () => {
    const outcome = await servers.call('flood_stderr_then_exit', { megabytes: 4 });
    expect(outcome.isError).toBe(true);
    expect(outcome.error?.code).toBe('TOOL_CRASHED');
    const message = textOf(outcome);
    expect(message).toContain('exited with code 7');
    expect(message).toContain('LAST WORDS before exiting');
    expect(message.length).toBeLessThan(4000);
    expect(await servers.call('flood_say')).toStrictEqual(answered('still here'));
    await servers.honestFine();
  });

  it('a server that exits mid-reply answers every call in flight TOOL_CRASHED, then is restarted', async () => {
    expect(await servers.call('exit_count')).toStrictEqual(answered('count: 1'));
    const held = servers.call('hold');
    const exiting = servers.call('exit_mid_reply');
    for (const outcome of await Promise.all([held, exiting])) {
      expect(outcome.isError).toBe(true);
      // Not a timeout (the entry's is 50 s): the exit itself answered both.
      expect(outcome.error?.code).toBe('TOOL_CRASHED');
    }
    expect(textOf(await exiting)).toContain('exiting mid-reply');
    expect(await servers.call('exit_say')).toStrictEqual(answered('still here'));
    // A new process: the count it kept is gone.
    expect(await servers.call('exit_count')).toStrictEqual(answered('count: 1'));
    await servers.honestFine();
  });

  it('a call never answered is TOOL_TIMEOUT, and the server hears notifications/cancelled for it', async () => {
    expect(await servers.call('never_answer')).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 1000 ms'),
    );
    const cancelled = textOf(await servers.call('cancellations'));
    expect(JSON.parse(cancelled.replace(/^cancelled: /, ''))).toHaveLength(1);
    await servers.honestFine();
  });

  it('a server that freezes is TOOL_TIMEOUT, then restarted: the next call answers from a new process', async () => {
    expect(await servers.call('frozen_freeze')).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 8000 ms'),
    );
    // The frozen process never answers anything again: this answer is a new process's.
    expect(await servers.call('frozen_never_say')).toStrictEqual(answered('still here'));
    await servers.honestFine();
  });

  it('a server that closes its stdout mid-call and lingers is TOOL_TIMEOUT, and the others go on', async () => {
    expect(await servers.call('close_stdout')).toStrictEqual(
      failed('TOOL_TIMEOUT', 'tool timed out after 1000 ms'),
    );
    await servers.honestFine();
  });

  it.each([
    ['sampling/createMessage', 'sampling'],
    ['elicitation/create', 'elicitation'],
  ])('a server asking the client for %s gets a clear error', async (method, what) => {
    const outcome = await servers.call('ask_client', { method });
    expect(textOf(outcome)).toMatch(new RegExp(`^error: -?\\d+ .*does not offer ${what}`));
    await servers.honestFine();
  });

  it('a server asking for roots/list gets its grants, nothing more', async () => {
    const outcome = await servers.call('ask_client', { method: 'roots/list' });
    const roots = JSON.parse(textOf(outcome).replace(/^answered: /, '')) as { roots: Array<{ uri: string }> };
    expect(roots.roots.map((root) => root.uri)).toEqual([pathToFileURL(rootsFolder).href]);
  });

  it('no outcome holds what a server wrote outside the protocol', () => {
    const everything = JSON.stringify(servers.outcomes);
    expect(everything).not.toContain(GARBAGE_MARKER);
    expect(everything).not.toContain(`${FLOOD_MARKER} `.repeat(100));
    expect(everything).not.toContain('FORGED');
    expect(everything).not.toContain('second reply');
  });
});
