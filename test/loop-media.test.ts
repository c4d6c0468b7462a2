/**
 * What the loop sends of media and resources: an image the Messages API would refuse is never sent
 * (from a ToolHost, a host-shaped object that skips toolhost's checks, or a loop tool); the model
 * gets an error result it can react to, and the loop goes on. Blocks the API has no place for
 * (audio, embedded resources, resource links) are sent as text stand-ins that say what was left out.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { imageProblem } from '../dist/src/boundary/media.js';
import { type LoopHost, runTools, ToolHost, type ToolInfo, toRunnableTools } from '../dist/src/index.js';
import { body, loopTool, reply, text, toolUse, useFakeApi } from './support/fake-messages-api.js';

const fake = useFakeApi();
const media = (file: string) => fileURLToPath(new URL(`../fixtures/media/${file}`, import.meta.url));
const NOT_BASE64 = '<<not base64 at all!>> \u0000\u2028';
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

function resultsOf(requestIndex: number): ToolResultBlockParam[] {
  return fake.api.body(requestIndex).messages.at(-1)?.content as ToolResultBlockParam[];
}

/** Every image block anywhere in every request the loop sent passes the API's checks. */
function expectEveryImageSendable(): void {
  for (const request of fake.api.requests) {
    const images: Array<{ media_type: string; data: string }> = [];
    JSON.stringify(request.body, (key, value) => {
      if (key === 'source' && value?.type === 'base64') images.push(value);
      return value;
    });
    for (const source of images) expect(imageProblem(source.media_type, source.data)).toBeUndefined();
  }
}

describe('runTools with a ToolHost', () => {
  let host: ToolHost;
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'toolhost-loop-media-'));
    host = new ToolHost({
      isolation: 'worker',
      dataDir,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
    });
    await host.load(media('hostile-image.js'));
    await host.load(media('good-media.js'));
  });
  afterEach(async () => {
    await host.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('never sends a hostile image: the model gets TOOL_BAD_RESULT, and the next turn runs', async () => {
    fake.api.script(
      reply([
        toolUse(
          'hostile_image',
          { case: 'PNG bytes labelled image/gif claiming 2^31-1 pixels a side' },
          'toolu_h',
        ),
      ]),
      reply([toolUse('good_media', { only: 'image' }, 'toolu_g')]),
      reply([text('done')]),
    );

    const { response } = await runTools(fake.client, body('draw'), { host });

    expect(response.content).toEqual([{ type: 'text', text: 'done', citations: null }]);
    expect(resultsOf(1)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_h',
        content: [{ type: 'text', text: 'an image labelled image/gif holds image/png bytes' }],
        is_error: true,
      },
    ]);
    expect(resultsOf(2)[0]?.content).toEqual([
      { type: 'text', text: 'media follows' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1X1 } },
    ]);
    expectEveryImageSendable();
  });

  it('sends audio, resources and links as text stand-ins that say what was left out', async () => {
    fake.api.script(reply([toolUse('good_media', {}, 'toolu_m')]), reply([text('ok')]));

    await runTools(fake.client, body('media'), { host });

    const [result] = resultsOf(1);
    expect(result?.is_error).toBeUndefined();
    expect(result?.content).toEqual([
      { type: 'text', text: 'media follows' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1X1 } },
      {
        type: 'text',
        text: '[audio left out: audio/wav, 52 bytes; the Messages API takes no audio in a tool result]',
      },
      { type: 'text', text: '[resource file:///reports/q3.md (text/markdown)]\n# Q3\nrevenue up' },
      {
        type: 'text',
        text: '[resource left out: file:///reports/q3.bin (application/octet-stream), 4 bytes of binary data; the Messages API takes no embedded binary resource]',
      },
      {
        type: 'text',
        text: '[resource link: q3.pdf "Q3 report" <https://example.com/q3.pdf> (application/pdf, 1234 bytes): The full report; its contents were not fetched]',
      },
    ]);
  });
});

describe("runTools with hosts and loop tools that skip toolhost's checks", () => {
  const picture: ToolInfo = {
    name: 'picture',
    description: 'A picture',
    parameterSchema: { type: 'object' },
    timeoutMs: 1000,
    concurrency: 'parallel',
  };
  const unchecked: LoopHost = {
    list: () => [picture],
    call: async () => ({
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: NOT_BASE64 } }],
      isError: false,
    }),
  };
  const sentInstead = {
    type: 'text',
    text: "TOOL_BAD_RESULT: the tool's result was not sent: an image's data is not base64",
  };

  it('an unchecked image from a host-shaped object is an error result, not part of the request', async () => {
    fake.api.script(reply([toolUse('picture', {}, 'toolu_p')]), reply([text('ok')]));

    const { response } = await runTools(fake.client, body('draw'), { host: unchecked });

    expect(response.content).toEqual([{ type: 'text', text: 'ok', citations: null }]);
    expect(resultsOf(1)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_p', content: [sentInstead], is_error: true },
    ]);
    expectEveryImageSendable();
  });

  it("a loop tool's image the API would refuse is an error result too", async () => {
    const tool = loopTool('chart', () => [
      { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: PNG_1X1 } },
    ]);
    fake.api.script(reply([toolUse('chart', {}, 'toolu_c')]), reply([text('ok')]));

    await runTools(fake.client, body('chart'), { tools: [tool] });

    expect(resultsOf(1)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_c',
        content: [
          {
            type: 'text',
            text: "TOOL_BAD_RESULT: the tool's result was not sent: an image labelled image/gif holds image/png bytes",
          },
        ],
        is_error: true,
      },
    ]);
    expectEveryImageSendable();
  });

  it("toRunnableTools answers such an image as the SDK's ToolError, never as content", async () => {
    const [tool] = toRunnableTools(unchecked);
    await expect(tool?.run({}, undefined)).rejects.toMatchObject({
      name: 'ToolError',
      content: "TOOL_BAD_RESULT: the tool's result was not sent: an image's data is not base64",
    });
  });
});
