/**
 * What a call answers: strings as they are, other values as JSON (inspected when JSON fails), tagged
 * results built with toolhost's helpers (images, details, explicit errors), output over the budget cut
 * head + tail with the whole kept under dataDir, and the Messages API `tools` param.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_ARRAY_ENTRIES } from '../dist/src/boundary/plain-data.js';
import { errorResult, image, text, toolResult, withDetails } from '../dist/src/index.js';
import { maxChildFrameValues } from '../dist/src/process/channel/frame-bounds.js';
import {
  answered,
  expectHostFine,
  failed,
  fixtureModule,
  loadEcho,
  useHosts,
} from './support/host-harness.js';

const makeHost = useHosts();
/** A whole 1×1 GIF. */
const GIF_1X1 = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

describe('encoding what a loaded tool returns', () => {
  it('a string is what the model sees, exactly', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('result-string.js'));

    expect(await host.call('result_string', {})).toStrictEqual(answered('  line one\nline "two" ✓ \n'));
  });

  it('an object is JSON', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('result-object.js'));

    expect(await host.call('result_object', {})).toStrictEqual(
      answered('{"city":"Zürich","temperatures":[3.5,-1,0],"sunny":false,"note":null}'),
    );
  });

  it('a BigInt that JSON cannot encode is inspected, not lost', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('call-returns-bigint.js'));

    expect(await host.call('call_returns_bigint', {})).toStrictEqual(
      answered('{ total: 12345678901234567890n }'),
    );
  });

  it('a cycle that JSON cannot encode is inspected, not lost', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('call-returns-cycle.js'));

    expect(await host.call('call_returns_cycle', {})).toStrictEqual(
      answered("<ref *1> { name: 'loop', self: [Circular *1] }"),
    );
  });

  it('a text block and an image built with the helpers arrive as content blocks, details beside them', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('result-image.js'));

    expect(await host.call('result_image', {})).toStrictEqual({
      content: [
        { type: 'text', text: 'a tiny chart' },
        {
          type: 'image',
          source: {
            type: 'base64',
            media_type: 'image/png',
            data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
          },
        },
      ],
      isError: false,
      details: { points: 8 },
    });
  });

  it('withDetails keeps the details out of what the model sees', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('result-with-details.js'));

    const outcome = await host.call('result_with_details', {});

    expect(outcome).toStrictEqual({
      content: [{ type: 'text', text: '3 words found' }],
      isError: false,
      details: { words: ['alpha', 'beta', 'gamma'], secretScore: 0.97 },
    });
    expect(JSON.stringify(outcome.content)).not.toContain('secretScore');
  });

  it('errorResult is an error outcome with code TOOL_ERROR_RESULT, its details kept beside it', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('result-error.js'));

    expect(await host.call('result_error', {})).toStrictEqual({
      content: [{ type: 'text', text: 'city not found: Atlantis' }],
      isError: true,
      details: { tried: ['Atlantis'] },
      error: { code: 'TOOL_ERROR_RESULT', message: 'city not found: Atlantis' },
    });
  });

  it('an ordinary object shaped like a result is not mistaken for one: it is JSON', async () => {
    const { host } = await makeHost();
    await host.load(fixtureModule('result-looks-tagged.js'));

    expect(await host.call('result_looks_tagged', {})).toStrictEqual(
      answered('{"content":[{"type":"text","text":"not a real block"}],"isError":true}'),
    );
  });
});

describe('a value too large to write as JSON', () => {
  it.each(['worker', 'strict'] as const)(
    "isolation: '%s': 5 million numbers (50 MB as JSON) are TOOL_BAD_RESULT before they are written, and the host goes on",
    async (isolation) => {
      const { host } = await makeHost({ isolation });
      await host.load(fixtureModule('result-big-value.js'));
      await loadEcho(host);

      expect(await host.call('result_big_value', { count: 5_000_000 })).toStrictEqual(
        failed(
          'TOOL_BAD_RESULT',
          `the tool returned a value of more than ${2 * 10 * 1024 * 1024 + 64} bytes as JSON, over twice the ${10 * 1024 * 1024}-byte cap (a string is cut to fit instead)`,
        ),
      );
      const small = await host.call('result_big_value', { count: 2 });
      expect(small.content).toEqual([{ type: 'text', text: '[123456789,123456789]' }]);
      await expectHostFine(host);
    },
  );
});

describe('details of very many values', () => {
  const MAX_VALUES = maxChildFrameValues({ maxResultBytes: 10 * 1024 * 1024, maxLogChars: 65_536 });

  it.each(['worker', 'strict', 'process'] as const)(
    "isolation: '%s': an array of more than MAX_ARRAY_ENTRIES (1.1 million zeros, 2.2 MB) is TOOL_BAD_RESULT, and the next call runs",
    async (isolation) => {
      const { host } = await makeHost({ isolation });
      await host.load(fixtureModule('result-many-values.js'));
      await loadEcho(host);

      expect(await host.call('result_many_values', { count: MAX_ARRAY_ENTRIES + 51_424 })).toStrictEqual(
        failed(
          'TOOL_BAD_RESULT',
          `the result's details are not plain data: details is an array of more than ${MAX_ARRAY_ENTRIES} entries`,
        ),
      );
      const fewer = await host.call('result_many_values', { count: 1000 });
      expect((fewer.details as unknown[]).length).toBe(1000);
      await expectHostFine(host);
    },
  );

  it.each(['worker', 'strict'] as const)(
    "isolation: '%s' takes two arrays of 700 000 zeros (1.4 million values, 2.8 MB)",
    async (isolation) => {
      const { host } = await makeHost({ isolation });
      await host.load(fixtureModule('result-many-values.js'));

      const outcome = await host.call('result_many_values', { count: 700_000, arrays: 2 });

      expect(outcome.isError).toBe(false);
      expect((outcome.details as unknown[][]).map((zeros) => zeros.length)).toEqual([700_000, 700_000]);
    },
  );

  it("isolation: 'process' answers two arrays of 700 000 zeros TOOL_BAD_RESULT from the process itself, which goes on to the next call", async () => {
    expect(1_400_000).toBeGreaterThan(MAX_VALUES);
    const { host } = await makeHost({ isolation: 'process', maxThreadsPerPool: 1 });
    await host.load(fixtureModule('result-many-values.js'));
    await loadEcho(host);
    const ended: string[] = [];
    host.on('workers', (event) => {
      if (event.type === 'ended' && event.source !== 'spare') ended.push(event.source);
    });

    expect(await host.call('result_many_values', { count: 700_000, arrays: 2 })).toStrictEqual(
      failed(
        'TOOL_BAD_RESULT',
        `the reply (the result and the output) holds more than ${MAX_VALUES} JSON values, more than a package's process may send`,
      ),
    );
    const fewer = await host.call('result_many_values', { count: 1000 });
    expect((fewer.details as unknown[]).length).toBe(1000);
    // Not a protocol breaker: the one process answered both calls.
    expect(ended).toEqual([]);
    await expectHostFine(host);
  });
});

describe("the host's own tools", () => {
  it('follow the same encoding: helpers, details, explicit errors and throws', async () => {
    const { host } = await makeHost();
    const schema = { type: 'object' as const };
    host.register({
      name: 'host_picture',
      description: 'A picture',
      parameterSchema: schema,
      run: () =>
        toolResult([text('chart'), image(Buffer.from(GIF_1X1, 'base64'), 'image/gif')], {
          details: { n: 3 },
        }),
    });
    host.register({
      name: 'host_details',
      description: 'Details',
      parameterSchema: schema,
      run: () => withDetails('short', { long: 'only for screens' }),
    });
    host.register({
      name: 'host_error',
      description: 'An error result',
      parameterSchema: schema,
      run: () => errorResult('no such city'),
    });
    host.register({
      name: 'host_throws_null',
      description: 'Throws null',
      parameterSchema: schema,
      run: () => {
        throw null;
      },
    });

    expect(await host.call('host_picture', {})).toStrictEqual({
      content: [
        { type: 'text', text: 'chart' },
        { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: GIF_1X1 } },
      ],
      isError: false,
      details: { n: 3 },
    });
    expect(await host.call('host_details', {})).toStrictEqual({
      content: [{ type: 'text', text: 'short' }],
      isError: false,
      details: { long: 'only for screens' },
    });
    expect(await host.call('host_error', {})).toStrictEqual(failed('TOOL_ERROR_RESULT', 'no such city'));
    expect(await host.call('host_throws_null', {})).toStrictEqual(
      failed('TOOL_THREW', 'the tool threw null'),
    );
  });
});

describe('output over the budget', () => {
  it('a 50 MB string is cut inside the worker to the hard cap, cut again for the model, and kept under dataDir', async () => {
    const maxResultBytes = 1024 * 1024;
    const outputBudgetBytes = 4096;
    const { host, dataDir } = await makeHost({ maxResultBytes, outputBudgetBytes });
    await loadEcho(host);
    await host.load(fixtureModule('call-huge-string.js'));

    const outcome = await host.call('call_huge_string', {});

    const totalBytes = 50 * 1024 * 1024;
    const path = outcome.fullOutputPath as string;
    expect(path.startsWith(join(dataDir, 'outputs'))).toBe(true);
    // What crossed from the worker (and was written whole) is the hard-capped text, never 50 MB.
    const kept = await readFile(path, 'utf8');
    // The cap covers the whole reply: the text block's overhead and room for the marker come off it.
    const half = Math.floor((maxResultBytes - 16 - 64) / 2);
    const workerMarker = `\n\n[... ${totalBytes - 2 * half} bytes cut by toolhost ...]\n\n`;
    expect(kept).toBe(`HEAD${'x'.repeat(half - 4)}${workerMarker}${'x'.repeat(half - 4)}TAIL`);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(maxResultBytes);

    const keptBytes = Buffer.byteLength(kept);
    const modelMarker = `\n\n[... ${keptBytes - outputBudgetBytes} bytes cut by toolhost; full output: ${path} ...]\n\n`;
    expect(outcome).toStrictEqual({
      content: [
        {
          type: 'text',
          text: `HEAD${'x'.repeat(outputBudgetBytes / 2 - 4)}${modelMarker}${kept.slice(-(outputBudgetBytes / 2))}`,
        },
      ],
      isError: false,
      fullOutputPath: path,
    });
    expect(kept.endsWith('xxTAIL')).toBe(true);
    await expectHostFine(host);
  });

  it('cuts fall between characters: multi-byte text stays valid UTF-8', async () => {
    const { host } = await makeHost({ outputBudgetBytes: 64 });
    host.register({
      name: 'host_emoji',
      description: 'Emoji',
      parameterSchema: { type: 'object' },
      run: () => '😀'.repeat(100),
    });

    const outcome = await host.call('host_emoji', {});

    const [block] = outcome.content;
    if (block?.type !== 'text') throw new Error('expected a text block');
    const [head, tail] = block.text.split(
      /\n\n\[\.\.\. \d+ bytes cut by toolhost; full output: .+ \.\.\.\]\n\n/,
    );
    expect(head).toBe('😀'.repeat(8));
    expect(tail).toBe('😀'.repeat(8));
    expect(block.text).not.toContain('\uFFFD');
    expect(await readFile(outcome.fullOutputPath as string, 'utf8')).toBe('😀'.repeat(100));
  });
});

describe('what the model is offered', () => {
  it('toAnthropicTools gives name, description and input_schema of every offered tool, and nothing else', async () => {
    const { host } = await makeHost();
    host.register({
      name: 'host_clock',
      description: 'Tells the time',
      parameterSchema: { type: 'object', properties: {} },
      run: () => 'noon',
    });
    await loadEcho(host);
    await host.load(fixtureModule('decl-name-throws.js'));

    expect(host.toAnthropicTools()).toStrictEqual([
      { name: 'host_clock', description: 'Tells the time', input_schema: { type: 'object', properties: {} } },
      {
        name: 'echo',
        description: 'Echoes the text it is given',
        input_schema: {
          type: 'object',
          properties: { text: { type: 'string' } },
          required: ['text'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('a call to a tool that is not offered answers UNKNOWN_TOOL with the names that are', async () => {
    const { host } = await makeHost();
    await loadEcho(host);
    await host.load(fixtureModule('decl-name-throws.js'));

    expect(await host.call('__proto__', {})).toStrictEqual(
      failed('UNKNOWN_TOOL', 'unknown tool "__proto__"; available tools: echo'),
    );
    expect(await host.call('toString', {})).toStrictEqual(
      failed('UNKNOWN_TOOL', 'unknown tool "toString"; available tools: echo'),
    );
    await expectHostFine(host);
  });
});
