/**
 * `toolhost/tool`: `defineTool` for typed tools and the small, dependency-free helpers tool authors
 * use to build tagged results, with every type of the tool module contract. Nothing is imported at
 * run time (the contract's types vanish when compiled), so this loads cheaply inside a tool's worker
 * and a tool package can copy it.
 */
import type {
  AudioContentBlock,
  AudioMediaType,
  ImageContentBlock,
  ImageMediaType,
  JsonObject,
  JsonValue,
  ParameterSchema,
  ResourceContentBlock,
  ResourceLinkContentBlock,
  TextContentBlock,
  ToolContentBlock,
  ToolDefinition,
} from './boundary/tool-contract.js';

export type * from './boundary/tool-contract.js';

/**
 * Types a tool: `run`'s `args` are inferred from the literal `parameterSchema` (no `as const`
 * needed in the call), so a misspelt or missing property fails to compile. At run time it only
 * returns its argument, the same plain module shape the contract accepts: `export default
 * defineTool({...})` is a tool module.
 * @example
 * export default defineTool({
 *   name: 'weather',
 *   description: 'Current weather for a city',
 *   parameterSchema: {
 *     type: 'object',
 *     properties: { city: { type: 'string' }, days: { type: 'integer' } },
 *     required: ['city'],
 *     additionalProperties: false,
 *   },
 *   run({ city, days = 1 }) { return `${city}: sunny for ${days} days`; }, // city: string, days?: number
 * });
 */
export function defineTool<const Schema extends ParameterSchema>(
  definition: ToolDefinition<Schema>,
): ToolDefinition<Schema> {
  return definition;
}

/**
 * The tag that marks a result built with these helpers. A plain string key with a versioned value,
 * so it survives structured cloning and an ordinary object result can't carry it by accident.
 */
export const RESULT_TAG = 'toolhost:result';
export const RESULT_TAG_VERSION = 1;

/** A tagged result: plain data, built by {@link toolResult} and friends. */
export interface TaggedResult {
  [RESULT_TAG]: typeof RESULT_TAG_VERSION;
  content: ToolContentBlock[];
  isError: boolean;
  details?: JsonValue;
  /** The result as one JSON object (see {@link structured}): what `outputSchema` is checked against. */
  structuredContent?: JsonObject;
}

/** A text block. */
export function text(value: string): TextContentBlock {
  return { type: 'text', text: value };
}

/**
 * An image block from base64 data or raw bytes.
 * @example image(pngBytes, 'image/png')
 */
export function image(data: string | Uint8Array, mediaType: ImageMediaType): ImageContentBlock {
  const base64 = typeof data === 'string' ? data : bytesToBase64(data);
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data: base64 } };
}

/**
 * An audio block from base64 data or raw bytes.
 * @example audio(wavBytes, 'audio/wav')
 */
export function audio(data: string | Uint8Array, mediaType: AudioMediaType): AudioContentBlock {
  const base64 = typeof data === 'string' ? data : bytesToBase64(data);
  return { type: 'audio', source: { type: 'base64', media_type: mediaType, data: base64 } };
}

/**
 * An embedded resource: a string is its text, bytes are sent as base64 (`blob`).
 * @example resource('file:///reports/q3.md', '# Q3', { mimeType: 'text/markdown' })
 */
export function resource(
  uri: string,
  contents: string | Uint8Array,
  options: { mimeType?: string } = {},
): ResourceContentBlock {
  const body = typeof contents === 'string' ? { text: contents } : { blob: bytesToBase64(contents) };
  const mime = options.mimeType === undefined ? {} : { mimeType: options.mimeType };
  return { type: 'resource', resource: { uri, ...mime, ...body } };
}

/**
 * A link to a resource the client may fetch itself.
 * @example resourceLink('https://example.com/q3.pdf', 'q3.pdf', { mimeType: 'application/pdf' })
 */
export function resourceLink(
  uri: string,
  name: string,
  options: { title?: string; description?: string; mimeType?: string; size?: number } = {},
): ResourceLinkContentBlock {
  const link: ResourceLinkContentBlock = { type: 'resource_link', uri, name };
  if (options.title !== undefined) link.title = options.title;
  if (options.description !== undefined) link.description = options.description;
  if (options.mimeType !== undefined) link.mimeType = options.mimeType;
  if (options.size !== undefined) link.size = options.size;
  return link;
}

/**
 * A structured result: one JSON object, which a declared `outputSchema` is checked against on the
 * host and MCP clients get as `structuredContent`. The model sees `content`, by default the object
 * as JSON text. (A plain object returned as it is counts as structured too.)
 * @example structured({ temperature: 21.5, unit: 'C' })
 */
export function structured(
  value: JsonObject,
  options: { content?: string | ToolContentBlock[]; details?: JsonValue } = {},
): TaggedResult {
  const tagged = toolResult(options.content ?? JSON.stringify(value), {
    ...(options.details === undefined ? {} : { details: options.details }),
  });
  tagged.structuredContent = value;
  return tagged;
}

/**
 * A result with content blocks (text, images, audio, resources) and optional `details` for the host's screens.
 * `details` is never sent to the model.
 * @example toolResult([text('a chart'), image(png, 'image/png')], { details: { points: 40 } })
 */
export function toolResult(
  content: string | ToolContentBlock[],
  options: { details?: JsonValue; isError?: boolean } = {},
): TaggedResult {
  const blocks = typeof content === 'string' ? [text(content)] : content;
  const tagged: TaggedResult = {
    [RESULT_TAG]: RESULT_TAG_VERSION,
    content: blocks,
    isError: options.isError ?? false,
  };
  if (options.details !== undefined) tagged.details = options.details;
  return tagged;
}

/**
 * The output the model sees, plus `details` for the host's screens only.
 * @example withDetails('3 words', { words: 3, lines: 1 })
 */
export function withDetails(output: string | ToolContentBlock[], details: JsonValue): TaggedResult {
  return toolResult(output, { details });
}

/**
 * An explicit error result: the model sees `message` with `is_error: true`.
 * @example errorResult('city not found: Atlantis')
 */
export function errorResult(message: string, details?: JsonValue): TaggedResult {
  return toolResult(message, details === undefined ? { isError: true } : { isError: true, details });
}

/** Is `value` a result built with these helpers (any object carrying the tag)? */
export function isTaggedResult(value: unknown): value is TaggedResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.hasOwn(value, RESULT_TAG) &&
    (value as Record<string, unknown>)[RESULT_TAG] === RESULT_TAG_VERSION
  );
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let index = 0; index < bytes.length; index += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  }
  return btoa(binary);
}
