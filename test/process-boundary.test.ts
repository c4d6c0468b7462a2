/**
 * Everything a package's process sends is untrusted input: a tool can write to the process's channel
 * to the host itself (descriptor 3), as code that took the process over would. A frame over the cap
 * is refused before it is held, a frame that is not JSON or not part of the protocol ends the
 * process, a malformed reply is its call's TOOL_BAD_RESULT, forged faults are heard a bounded number
 * of times, and messages for calls the process does not hold reach nobody. Every call answers once,
 * the host's memory stays flat, and the next call runs in a new process.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { outcomeText, type ToolOutputEvent } from '../dist/src/index.js';
import {
  maxChildFrameBytes,
  maxChildFrameValues,
  maxChildNoteBytes,
} from '../dist/src/process/channel/frame-bounds.js';
import { collect, expectHostFine, failed, loadEcho, useHosts } from './support/host-harness.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const MB = 1024 * 1024;
const makeHost = useHosts();
/** The cap of a host with the default maxResultBytes and maxLogChars. */
const LIMITS = { maxResultBytes: 10 * MB, maxLogChars: 65_536 };
const CAP = maxChildFrameBytes(LIMITS);

async function hostWithHostile() {
  const made = await makeHost({ isolation: 'process' });
  await loadEcho(made.host);
  await made.host.load(HOSTILE);
  return made;
}

describe("isolation: 'process', a process that writes to its channel itself", () => {
  it.each([
    [
      'announces a 4 GB message',
      'oversize',
      `it announced a message of ${0xfffffff0} bytes, over the ${CAP}-byte cap`,
    ],
    ['sends a frame that is not JSON', 'not-json', 'it sent a message that is not JSON'],
    [
      'sends a message of no type the protocol has',
      'unknown-type',
      'it sent a message that is not part of it',
    ],
    [
      'sends a frame of more values than a message may hold (before the host parses it)',
      'many-values',
      `it sent a message of more than ${maxChildFrameValues(LIMITS)} values`,
    ],
    [
      'sends a progress message over what one may hold',
      'big-progress',
      `it sent a progress message over the ${maxChildNoteBytes(LIMITS)}-byte bound`,
    ],
    [
      'sends replies, progress and log messages for a call it does not hold',
      'foreign-task',
      'it sent a message for a call it does not hold',
    ],
  ])(
    'that %s is ended: the call answers TOOL_CRASHED, the host stays flat, the next call runs',
    async (_, attack, reason) => {
      const { host } = await hostWithHostile();
      const before = process.memoryUsage.rss();

      const outcome = await host.call('proc_forge_channel', { attack });

      expect(outcome).toStrictEqual(
        failed('TOOL_CRASHED', `the tool's process broke the protocol: ${reason}`),
      );
      expect(process.memoryUsage.rss() - before).toBeLessThan(100 * MB);
      expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
      await expectHostFine(host);
    },
  );

  it('that forges a malformed reply for its own call gets TOOL_BAD_RESULT, and is ended', async () => {
    const { host } = await hostWithHostile();
    expect(await host.call('proc_forge_channel', { attack: 'bad-reply' })).toStrictEqual(
      failed('TOOL_BAD_RESULT', "the tool's process sent a malformed reply: its logs are not an array"),
    );
    expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
  });

  it('that floods forged faults is heard 100 times, no more, and its call still answers', async () => {
    const { host, logger } = await hostWithHostile();
    const faults = collect(host, 'fault');

    const outcome = await host.call('proc_forge_channel', { attack: 'fault-flood' });
    // The flood was written before the reply, on the same channel: all of it has been read.
    expect(outcomeText(outcome)).toBe('the host did not end this process');
    expect(faults).toHaveLength(100);
    expect(faults.map((fault) => fault.message)).toEqual(
      Array.from({ length: 100 }, (_, index) => `forged fault ${index}`),
    );
    expect(logger.matching('warn', 'forged fault')).toHaveLength(100);
  });

  it('that forges log messages for its own call has the malformed ones dropped, at most 1000 heard and the call held to its character cap; its own reply after the forged one ends it', async () => {
    const { host } = await hostWithHostile();
    const heard: ToolOutputEvent[] = [];
    // The tool's own reply comes after its forged one: a message for a call its process no longer
    // holds, and the host ends that process.
    const ended = new Promise<void>((resolve) =>
      host.on('workers', (event) => {
        if (event.type === 'ended' && event.source !== 'spare') resolve();
      }),
    );

    const outcome = await host.call(
      'proc_forge_channel',
      { attack: 'forged-logs' },
      { onOutput: (event) => heard.push(event) },
    );
    expect(outcomeText(outcome)).toBe('a forged answer');
    const forwarded = heard.slice(0, -1).flatMap((event) => event.logs);
    // Three malformed messages count toward the 1000 a call takes, and are not heard.
    expect(forwarded).toEqual(
      Array.from({ length: 997 }, (_, index) => ({ stream: 'stdout', text: `forged ${index}\n` })),
    );
    // The forged reply's output is cut to what the cap leaves; the rest is counted as dropped.
    const forwardedChars = forwarded.reduce((sum, log) => sum + log.text.length, 0);
    const last = heard.at(-1);
    expect(last?.logs).toEqual([{ stream: 'stdout', text: 'y'.repeat(65_536 - forwardedChars) }]);
    expect(last?.droppedChars).toBe(forwardedChars);
    await ended;
    expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
    await expectHostFine(host);
  });
});
