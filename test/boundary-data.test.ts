/**
 * Data the host can't take: progress nested deeper than the host's main thread can
 * deserialize, replies whose parts each fit the cap but not together, and an array that is tiny to
 * clone and huge as JSON. `maxResultBytes` counts all of a reply (every content block and the
 * details); nothing over it crosses.
 */
import { describe, expect, it } from 'vitest';
import { boundaryFixture, TIERS } from './support/boundary.js';
import { answered, expectHostFine } from './support/host-harness.js';
import { useSharedHost } from './support/shared-host.js';

const CAP = 65_536;

describe.each(TIERS)("isolation: '%s', one host through every attack", (isolation) => {
  // The output budget is the cap, so what the host shows is what crossed.
  const shared = useSharedHost({ isolation, maxResultBytes: CAP, outputBudgetBytes: CAP });
  async function hostWith(file: string) {
    await shared.use(boundaryFixture(file));
    return shared;
  }

  it('progress nested 5000 deep never reaches the host; the shallow progress after it does, and the call answers', async () => {
    const { host } = await hostWith('call-emits-deep-progress.js');
    const progress = shared.collect('progress');

    expect(await host.call('call_emits_deep_progress', {})).toStrictEqual(answered('emitted'));

    expect(progress.map((event) => event.data)).toStrictEqual([{ shallow: true }]);
    expect(await host.call('call_emits_deep_progress', {})).toStrictEqual(answered('emitted'));
    await expectHostFine(host);
  });

  it('eight text blocks each just under maxResultBytes are cut to fit it together', async () => {
    const { host } = await hostWith('call-returns-eight-capped-texts.js');

    const outcome = await host.call('call_returns_eight_capped_texts', { cap: CAP });

    expect(outcome.isError).toBe(false);
    expect(outcome.content).toHaveLength(8);
    const bytes = outcome.content.reduce(
      (sum, block) => sum + (block.type === 'text' ? Buffer.byteLength(block.text) : 0),
      0,
    );
    expect(bytes).toBeLessThanOrEqual(CAP);
    // Each block kept its own head and tail: it was cut, not dropped.
    outcome.content.forEach((block, index) => {
      expect(block.type === 'text' && block.text.startsWith(String(index))).toBe(true);
      expect(block.type === 'text' && block.text.endsWith(String(index))).toBe(true);
    });
    await expectHostFine(host);
  });

  it('eight text blocks and eight details strings each just under maxResultBytes are refused as one reply over the cap', async () => {
    const { host } = await hostWith('call-returns-eight-capped-details.js');
    const outputs = shared.collect('output');

    const outcome = await host.call('call_returns_eight_capped_details', { cap: CAP });

    expect(outcome.isError).toBe(true);
    expect(outcome.error?.code).toBe('TOOL_BAD_RESULT');
    expect(outcome.error?.message).toBe(
      `the result's details are not plain data: details is larger than ${CAP} bytes`,
    );
    expect(outcome.details).toBeUndefined();
    expect(outputs).toEqual([]);
    await expectHostFine(host);
  });

  it('an honest error with a 600 000-character message is its TOOL_THREW, cut, and the next call works', async () => {
    const { host } = await hostWith('call-throws-a-huge-message.js');

    const outcome = await host.call('call_throws_a_huge_message', {});

    expect(outcome.error?.code).toBe('TOOL_THREW');
    expect(outcome.error?.message).toBe(`${'w'.repeat(2000)}… (598000 more characters)`);
    await expectHostFine(host);
  });

  it('details with an empty array of length 1e9 (5 GB as JSON) are refused, and the outcome prints', async () => {
    const { host } = await hostWith('call-returns-a-hollow-array.js');

    const outcome = await host.call('call_returns_a_hollow_array', {});

    expect(outcome.error).toStrictEqual({
      code: 'TOOL_BAD_RESULT',
      // Its length alone puts it over the cap: none of its names is listed.
      message: `the result's details are not plain data: details is larger than ${CAP} bytes`,
    });
    expect(outcome.details).toBeUndefined();
    expect(JSON.stringify(outcome).length).toBeLessThan(1_000);
    await expectHostFine(host);
  });
});
