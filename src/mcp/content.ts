/**
 * What the MCP client sees of the host: a tool's checked declaration as an MCP `Tool`, and a call's
 * outcome as a `CallToolResult`. Pure functions, so the mapping can be read (and tested) in one place.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { jsonObjectOf, type ToolOutcome } from '../boundary/outcome.js';
import type { ToolContentBlock } from '../boundary/tool-contract.js';
import type { ToolInfo } from '../declaration/check.js';

/**
 * The `_meta` keys toolhost adds. The spec allows a prefix of dot-separated labels and a slash; a
 * tool's timeout and concurrency have no standard annotation (annotations are behaviour hints such
 * as `readOnlyHint`, which toolhost can't vouch for), so they go here.
 */
export const META = {
  timeoutMs: 'toolhost/timeoutMs',
  concurrency: 'toolhost/concurrency',
  errorCode: 'toolhost/errorCode',
  details: 'toolhost/details',
  fullOutputPath: 'toolhost/fullOutputPath',
} as const;

/**
 * An offered tool as `tools/list` shows it: its schema is already a JSON Schema object of `type:
 * "object"`. `title`, `annotations` and `outputSchema` are passed on when the tool declared them;
 * the annotations are the tool's own claims, and a client must not trust them.
 */
export function toMcpTool(info: ToolInfo): Tool {
  const tool: Tool = {
    name: info.name,
    description: info.description,
    inputSchema: { ...info.parameterSchema, type: 'object' } as Tool['inputSchema'],
    _meta: { [META.timeoutMs]: info.timeoutMs, [META.concurrency]: info.concurrency },
  };
  if (info.title !== undefined) tool.title = info.title;
  if (info.annotations !== undefined) tool.annotations = { ...info.annotations };
  if (info.outputSchema !== undefined) {
    tool.outputSchema = { ...info.outputSchema, type: 'object' } as NonNullable<Tool['outputSchema']>;
  }
  return tool;
}

type McpContent = CallToolResult['content'][number];

/** One block as MCP content: text, image and audio as themselves, resources and links in MCP's shapes. */
export function toMcpContent(block: ToolContentBlock): McpContent {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return { type: block.type, data: block.source.data, mimeType: block.source.media_type };
    case 'resource':
      return { type: 'resource', resource: { ...block.resource } };
    case 'resource_link': {
      const { type: _type, ...link } = block;
      return { type: 'resource_link', ...link };
    }
  }
}

/**
 * A call's outcome as a `tools/call` result. Every block becomes its MCP content type; an error
 * outcome is `isError` with its code leading the text (`TOOL_TIMEOUT: tool timed out after 50 ms`),
 * so a model reading only the text still learns why. A structured result (`structured(...)`, or a
 * plain object result checked against an `outputSchema`) is given as `structuredContent`, and so is a
 * result whose one text block is a JSON object (the spec wants the same JSON in a text block beside it,
 * which it already is). `details` and the code go in `_meta`, which clients don't show the model.
 */
export function toCallToolResult(outcome: ToolOutcome): CallToolResult {
  const media = outcome.content.flatMap((block) => (block.type === 'text' ? [] : [toMcpContent(block)]));
  const meta: Record<string, unknown> = {};
  if (outcome.details !== undefined) meta[META.details] = outcome.details;
  if (outcome.fullOutputPath !== undefined) meta[META.fullOutputPath] = outcome.fullOutputPath;

  if (outcome.isError) {
    const code = outcome.error?.code ?? 'TOOL_ERROR_RESULT';
    const message =
      outcome.error?.message ??
      outcome.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
    meta[META.errorCode] = code;
    return {
      content: [{ type: 'text', text: `${code}: ${message}` }, ...media],
      isError: true,
      _meta: meta,
    };
  }

  const content: CallToolResult['content'] = outcome.content.map(toMcpContent);
  const result: CallToolResult = { content, isError: false };
  // A structured result was checked against the tool's outputSchema, when it declared one. A tool
  // with an outputSchema always has it set here: its other results are errors.
  const structured = outcome.structuredContent ?? jsonObjectOf(outcome);
  if (structured !== undefined) result.structuredContent = structured;
  if (Object.keys(meta).length > 0) result._meta = meta;
  return result;
}
