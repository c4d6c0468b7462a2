/**
 * A server's `tools/call` result, checked as a tool's reply is: each content block (text, image,
 * audio, embedded resource, resource link) read by the same {@link readContentBlock} the workers'
 * replies go through (images as strictly), `structuredContent` plain data within bounds. What
 * passes becomes the host's reply shape; anything else is `TOOL_BAD_RESULT`.
 */
import { readContentBlock } from '../../boundary/content-blocks.js';
import { checkPlainData, MAX_DATA_DEPTH } from '../../boundary/plain-data.js';
import type { JsonObject, ToolContentBlock } from '../../boundary/tool-contract.js';
import { type Data, own, record } from '../../boundary/untrusted.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';

/** The most content blocks one result may hold. */
export const MAX_RESULT_BLOCKS = 1000;

/** A server's result as the host's reply, or `TOOL_BAD_RESULT` naming what is wrong with it. */
export function replyOfResult(result: unknown, maxResultBytes: number): PoolReply {
  const bad = (why: string) => failure('TOOL_BAD_RESULT', `the MCP server's result is malformed: ${why}`);
  const data = record(result);
  if (data === undefined) return bad('it is not an object');
  const blocks = own(data, 'content') ?? [];
  if (!Array.isArray(blocks)) return bad('its `content` is not a list');
  if (blocks.length > MAX_RESULT_BLOCKS) return bad(`it has more than ${MAX_RESULT_BLOCKS} content blocks`);
  const isError = own(data, 'isError');
  if (isError !== undefined && typeof isError !== 'boolean') return bad('its `isError` is not a boolean');
  const content: ToolContentBlock[] = [];
  for (const block of blocks) {
    const read = readContentBlock(hostShape(record(block)));
    if (typeof read === 'string') return bad(read);
    content.push(read);
  }
  const reply: PoolReply = {
    ok: true,
    content,
    isError: isError === true,
    cutBytes: 0,
    logs: [],
    droppedLogChars: 0,
    progressSent: 0,
  };
  const structured = own(data, 'structuredContent');
  if (structured !== undefined) {
    if (record(structured) === undefined) return bad('its `structuredContent` is not an object');
    const check = checkPlainData(
      structured,
      { maxDepth: MAX_DATA_DEPTH, maxBytes: maxResultBytes },
      'structuredContent',
    );
    if (!check.ok) return bad(check.problem);
    reply.structuredContent = structured as JsonObject;
  }
  return reply;
}

/** An MCP content block in the host's shape (images and audio carry a base64 `source`). */
function hostShape(block: Data | undefined): unknown {
  if (block === undefined) return undefined;
  const type = own(block, 'type');
  if (type === 'image' || type === 'audio') {
    return {
      type,
      source: { type: 'base64', media_type: own(block, 'mimeType'), data: own(block, 'data') },
    };
  }
  if (type === 'resource_link') {
    const link: Data = { type };
    for (const key of ['uri', 'name', 'title', 'description', 'mimeType', 'size']) {
      if (own(block, key) !== undefined) link[key] = own(block, key);
    }
    return link;
  }
  if (type === 'resource') {
    const resource = record(own(block, 'resource'));
    if (resource === undefined) return block;
    const contents: Data = {};
    for (const key of ['uri', 'mimeType', 'text', 'blob']) {
      if (own(resource, key) !== undefined) contents[key] = own(resource, key);
    }
    return { type, resource: contents };
  }
  if (type === 'text') return { type, text: own(block, 'text') };
  return block;
}
