/**
 * A call's printing heard while it runs, in every tier that captures it: a call made with
 * `onOutput` gets the tool's lines as they are printed (proved by a tool that waits for a file the
 * listener writes once it heard where), each line once, and the host's `output` event sees the
 * same; a call without one has its output forwarded by nobody. A tool printing in a tight loop,
 * huge lines and control characters stays within the call's caps, and the host, the next call and
 * another package's tool are fine.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ToolOutputEvent } from '../dist/src/index.js';
import { answered, collect, expectHostFine, jsonOf, loadEcho, useHosts } from './support/host-harness.js';

const makeHost = useHosts();
const LIVE_OUTPUT = fileURLToPath(new URL('../fixtures/live-output', import.meta.url));

/** What the events say a stream printed, in order. */
function printed(events: readonly ToolOutputEvent[], stream: 'stdout' | 'stderr'): string {
  return events
    .flatMap((event) => event.logs)
    .filter((log) => log.stream === stream)
    .map((log) => log.text)
    .join('');
}

describe.each(['worker', 'strict', 'process'] as const)('live output in the %s tier', (isolation) => {
  it('a listener hears the first line while the call runs, and every line once', async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
    await loadEcho(host);
    await host.load(LIVE_OUTPUT);
    const onHost = collect(host, 'output');
    const heard: ToolOutputEvent[] = [];
    let answeredYet = false;
    let heardBeforeAnswer = false;
    let gate: string | undefined;
    const outcome = host
      .call(
        'print_then_wait',
        {},
        {
          onOutput: (event) => {
            heard.push(event);
            const match = /waiting for (\S+)\n/.exec(printed(heard, 'stdout'));
            if (match?.[1] === undefined || gate !== undefined) return;
            heardBeforeAnswer = !answeredYet;
            // The tool answers only once this file exists: hearing the line late would hang it.
            gate = match[1];
            writeFileSync(gate, '');
          },
        },
      )
      .then((result) => {
        answeredYet = true;
        return result;
      });

    expect(await outcome).toStrictEqual(answered('done'));
    expect(heardBeforeAnswer).toBe(true);
    expect(printed(heard, 'stdout')).toBe(`waiting for ${gate}\nreleased\n`);
    expect(printed(heard, 'stderr')).toBe('a line on stderr\n');
    expect(heard.every((event) => event.name === 'print_then_wait')).toBe(true);
    expect(onHost).toStrictEqual(heard);
    await expectHostFine(host);
  });

  it('a call without a listener has nothing forwarded: its output is one event with the answer', async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
    await host.load(LIVE_OUTPUT);
    const onHost = collect(host, 'output');
    expect(await host.call('print_flood', { bursts: 20, huge: false })).toStrictEqual(answered('flooded'));
    expect(onHost).toHaveLength(1);
    expect(printed(onHost, 'stdout')).toContain('burst 19 line 49\n');
  });

  it('a tool alternating streams a character at a time has every character it may keep heard, one entry each, and the next call is fine', async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
    await loadEcho(host);
    await host.load(LIVE_OUTPUT);
    const heard: ToolOutputEvent[] = [];
    const outcome = await host.call(
      'print_alternating',
      { count: 80_000 },
      { onOutput: (event) => heard.push(event) },
    );
    expect(outcome).toStrictEqual(answered('printed'));
    // The default maxLogChars: 65,536 entries of one character (in the process tier, output
    // messages of about 30 bytes a character, and a reply that may carry as many).
    const entries = heard.flatMap((event) => event.logs);
    expect(entries).toHaveLength(65_536);
    expect(printed(heard, 'stdout')).toBe('o'.repeat(32_768));
    expect(printed(heard, 'stderr')).toBe('e'.repeat(32_768));
    expect(jsonOf(await host.call('echo', { text: 'next' }))).toMatchObject({ echoed: 'next' });
    await expectHostFine(host);
  });

  it('a tool printing in a tight loop, huge lines and control characters stays within its caps, and the host, the next call and another package are fine', async () => {
    const maxLogChars = 200_000;
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1, maxLogChars });
    await loadEcho(host);
    await host.load(LIVE_OUTPUT);
    const heard: ToolOutputEvent[] = [];
    expect(
      await host.call(
        'print_flood',
        { bursts: 5000, huge: false },
        { onOutput: (event) => heard.push(event) },
      ),
    ).toStrictEqual(answered('flooded'));
    const text = printed(heard, 'stdout');
    expect(text.length).toBe(maxLogChars);
    expect(text.startsWith('\u001b[31mred\u001b[0m\rover\u0007written\nburst 0 line 0\n')).toBe(true);
    // Forwarded while it ran, in gathered messages: at most 1000 of them, and the answer's rest.
    expect(heard.length).toBeGreaterThan(1);
    expect(heard.length).toBeLessThanOrEqual(1001);
    expect(heard.reduce((sum, event) => sum + event.droppedChars, 0)).toBeGreaterThan(0);

    // A line of a million characters: what fits the cap is heard, the rest is counted as dropped.
    const huge: ToolOutputEvent[] = [];
    await host.call('print_flood', { bursts: 1 }, { onOutput: (event) => huge.push(event) });
    expect(printed(huge, 'stdout').length).toBe(maxLogChars);
    expect(huge.reduce((sum, event) => sum + event.droppedChars, 0)).toBeGreaterThan(800_000);

    // A listener that throws loses its lines, never the call.
    expect(
      await host.call(
        'print_flood',
        { bursts: 3 },
        {
          onOutput: () => {
            throw new Error('a listener that throws');
          },
        },
      ),
    ).toStrictEqual(answered('flooded'));
    expect(await host.call('print_flood', { bursts: 1 })).toStrictEqual(answered('flooded'));
    await expectHostFine(host);
  });
});
