/**
 * Images, audio and resources a tool returns, through a real host in every tier: a hostile image is
 * the call's TOOL_BAD_RESULT with its reason (the check runs where the result is encoded, in the
 * tool's worker), the host lives, and the next call, the same tool's good media and another
 * package's tool all answer. Good audio, resources and links arrive as their blocks.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../dist/src/index.js';
import { expectHostFine, loadEcho, useHosts } from './support/host-harness.js';

const makeHost = useHosts();
const media = (file: string) => fileURLToPath(new URL(`../fixtures/media/${file}`, import.meta.url));

const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Each hostile case of fixtures/media/hostile-image.js and the reason the model reads. */
const HOSTILE: Array<[string, string]> = [
  ['not base64', "an image's data is not base64"],
  [
    'PNG bytes labelled image/gif claiming 2^31-1 pixels a side',
    'an image labelled image/gif holds image/png bytes',
  ],
  [
    'a PNG claiming 2^31-1 pixels a side',
    "an image is 2147483647×2147483647 pixels, over the API's 8000-pixel limit per side",
  ],
  ['a truncated PNG header', 'an image labelled image/png has a truncated header'],
  [
    'a JPEG whose segments never reach a frame header',
    'an image labelled image/jpeg has more than 4096 segments before its frame header',
  ],
  [
    'a JPEG segment of length 0',
    'an image labelled image/jpeg has a segment shorter than its own length field',
  ],
  ['a GIF of 65535 × 65535', "an image is 65535×65535 pixels, over the API's 8000-pixel limit per side"],
  ['over 5 MB of base64', "an image is 5242884 bytes of base64, over the API's 5242880-byte limit"],
];

function badResult(message: string): ToolOutcome {
  return {
    content: [{ type: 'text', text: message }],
    isError: true,
    error: { code: 'TOOL_BAD_RESULT', message },
  };
}

describe.each(['worker', 'strict', 'process'] as const)('media results in the %s tier', (isolation) => {
  it('every hostile image is TOOL_BAD_RESULT with its reason, and the host, the tool and another package serve on', async () => {
    const { host } = await makeHost({ isolation, maxThreadsPerPool: 1 });
    await loadEcho(host);
    await host.load(media('hostile-image.js'));
    await host.load(media('good-media.js'));

    for (const [name, reason] of HOSTILE) {
      expect(await host.call('hostile_image', { case: name }), name).toStrictEqual(badResult(reason));
      expect(await host.call('hostile_image', { case: 'none' })).toStrictEqual({
        content: [{ type: 'text', text: 'no case none' }],
        isError: false,
      });
    }
    const good = await host.call('good_media', { only: 'image' });
    expect(good.content[1]).toStrictEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG_1X1 },
    });
    await expectHostFine(host);
  });

  it('audio, an embedded text and binary resource and a resource link arrive as their blocks', async () => {
    const { host } = await makeHost({ isolation });
    await host.load(media('good-media.js'));

    const outcome = await host.call('good_media', {});

    expect(outcome.isError).toBe(false);
    expect(outcome.content.map((block) => block.type)).toEqual([
      'text',
      'image',
      'audio',
      'resource',
      'resource',
      'resource_link',
    ]);
    expect(outcome.content[2]).toMatchObject({
      type: 'audio',
      source: { type: 'base64', media_type: 'audio/wav' },
    });
    expect(outcome.content[3]).toStrictEqual({
      type: 'resource',
      resource: { uri: 'file:///reports/q3.md', mimeType: 'text/markdown', text: '# Q3\nrevenue up' },
    });
    expect(outcome.content[4]).toStrictEqual({
      type: 'resource',
      resource: { uri: 'file:///reports/q3.bin', mimeType: 'application/octet-stream', blob: 'AQIDBA==' },
    });
    expect(outcome.content[5]).toStrictEqual({
      type: 'resource_link',
      uri: 'https://example.com/q3.pdf',
      name: 'q3.pdf',
      title: 'Q3 report',
      description: 'The full report',
      mimeType: 'application/pdf',
      size: 1234,
    });
  });
});
