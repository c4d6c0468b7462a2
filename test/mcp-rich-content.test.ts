/**
 * The richer declarations and results through `toolhost serve` over stdio, with the official MCP
 * client: title, annotations and outputSchema in tools/list; audio, embedded resources and resource
 * links as their MCP content types; structuredContent that always matches the declared outputSchema
 * (the client's own check of it passes), and a result that breaks it is an error, never content.
 */
import { fileURLToPath } from 'node:url';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDir } from './support/cli-run.js';
import { type StdioServe, startStdio } from './support/mcp-serve.js';

const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url));

describe('toolhost serve: richer tools', () => {
  const tmp = freshDir('toolhost-mcp-rich');
  let serve: StdioServe;

  beforeAll(async () => {
    serve = await startStdio(
      [
        fixture('media/good-media.js'),
        fixture('media/hostile-image.js'),
        fixture('declarations/rich-valid.js'),
      ],
      tmp.path,
    );
  });
  afterAll(async () => {
    await serve?.client.close();
    tmp.remove();
  });

  it('lists title, annotations and outputSchema as the tool declared them', async () => {
    const { tools } = await serve.client.listTools();
    const rich = tools.find((tool) => tool.name === 'rich_valid');
    expect(rich).toMatchObject({
      title: 'City temperature',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      outputSchema: {
        type: 'object',
        properties: { celsius: { type: 'number' }, city: { type: 'string' } },
        required: ['celsius', 'city'],
      },
    });
    const plain = tools.find((tool) => tool.name === 'good_media');
    expect(plain).not.toHaveProperty('title');
    expect(plain).not.toHaveProperty('annotations');
    expect(plain).not.toHaveProperty('outputSchema');
  });

  it('answers audio, embedded resources and a resource link as their MCP content types', async () => {
    const result = CallToolResultSchema.parse(
      await serve.client.callTool({ name: 'good_media', arguments: {} }),
    );
    expect(result.isError).toBe(false);
    expect(result.content.slice(2)).toEqual([
      { type: 'audio', data: expect.stringMatching(/^UklGR/), mimeType: 'audio/wav' },
      {
        type: 'resource',
        resource: { uri: 'file:///reports/q3.md', mimeType: 'text/markdown', text: '# Q3\nrevenue up' },
      },
      {
        type: 'resource',
        resource: { uri: 'file:///reports/q3.bin', mimeType: 'application/octet-stream', blob: 'AQIDBA==' },
      },
      {
        type: 'resource_link',
        uri: 'https://example.com/q3.pdf',
        name: 'q3.pdf',
        title: 'Q3 report',
        description: 'The full report',
        mimeType: 'application/pdf',
        size: 1234,
      },
    ]);
  });

  it('gives a structured result as structuredContent, which the client checks against the outputSchema', async () => {
    // The SDK client validates structuredContent against the listed outputSchema (it needs the list first).
    await serve.client.listTools();
    const result = await serve.client.callTool({ name: 'rich_valid', arguments: { give: 'structured' } });
    expect(result).toMatchObject({
      content: [{ type: 'text', text: 'Oslo: 21.5 °C' }],
      structuredContent: { celsius: 21.5, city: 'Oslo' },
      isError: false,
    });
  });

  it('answers a result that breaks the outputSchema as an error without structuredContent', async () => {
    await serve.client.listTools();
    const result = await serve.client.callTool({ name: 'rich_valid', arguments: { give: 'mismatch' } });
    expect(result.isError).toBe(true);
    expect(result).not.toHaveProperty('structuredContent');
    expect(result.content).toEqual([
      {
        type: 'text',
        text: "TOOL_BAD_RESULT: the tool's structured result does not match its outputSchema: the result must NOT have additional properties (wind); /celsius must be number",
      },
    ]);
  });

  it('answers a hostile image as TOOL_BAD_RESULT, and the next call is fine', async () => {
    const bad = await serve.client.callTool({ name: 'hostile_image', arguments: { case: 'not base64' } });
    expect(bad).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: "TOOL_BAD_RESULT: an image's data is not base64" }],
    });
    const good = await serve.client.callTool({ name: 'good_media', arguments: { only: 'image' } });
    expect(good.isError).toBe(false);
  });
});
