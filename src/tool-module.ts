/**
 * The tool module contract (what a third-party package ships), `defineTool` for typed tools, and the
 * small, dependency-free helpers tool authors use to build tagged results. This file has no imports,
 * so that it loads cheaply from `toolhost/tool` inside a tool's worker and a tool package can copy it.
 */

/** A JSON value: what crosses between the host, the workers and the model. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** A JSON value as a literal schema holds it: `as const` (or a `const` type parameter) makes arrays readonly. */
export type JsonSchemaValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonSchemaValue[]
  | { readonly [key: string]: JsonSchemaValue };

/** A JSON Schema object: plain data. */
export type JsonSchema = { readonly [key: string]: JsonSchemaValue };

/** What the contract asks of `parameterSchema`: an object schema at the root. */
export type ParameterSchema = JsonSchema & { readonly type: 'object' };

/**
 * The type of the values a literal JSON Schema accepts, for typing a tool's arguments (types only,
 * nothing runs). It reads `type` (one or a list), `properties`, `required`, `additionalProperties`,
 * `items`, `enum`, `const`, `anyOf` and `oneOf`. A keyword it does not read (`allOf`, `$ref`, `not`,
 * `if`, `prefixItems`, `unevaluatedProperties`, ...) only leaves the type wider than the schema,
 * never narrower: a schema with none of these is any {@link JsonValue}. An object schema without
 * `additionalProperties: false` accepts other keys, so its type has an index signature (`args.other`
 * is then a `JsonValue`, and an error under `noPropertyAccessFromIndexSignature`).
 */
export type InferSchema<Schema> = Schema extends true
  ? JsonValue
  : Schema extends false
    ? never
    : Schema extends JsonSchema
      ? FromKeywords<Schema>
      : JsonValue;

type FromKeywords<S extends JsonSchema> = S extends { readonly const: infer Value }
  ? Writable<Value>
  : S extends { readonly enum: readonly (infer Member)[] }
    ? Writable<Member>
    : S extends { readonly anyOf: readonly (infer Branch)[] }
      ? Branches<Omit<S, 'anyOf'>, Branch>
      : S extends { readonly oneOf: readonly (infer Branch)[] }
        ? Branches<Omit<S, 'oneOf'>, Branch>
        : S extends { readonly type: infer Type }
          ? Type extends readonly (infer Name)[]
            ? ByType<Name, S>
            : ByType<Type, S>
          : JsonValue;

/** Each branch sees the keywords beside `anyOf`/`oneOf` too, as a validator applies both. */
type Branches<Rest, Branch> = Branch extends JsonSchema
  ? InferSchema<Rest & Branch>
  : Branch extends boolean
    ? InferSchema<Branch>
    : never;

type ByType<Name, S> = Name extends 'string'
  ? string
  : Name extends 'number' | 'integer'
    ? number
    : Name extends 'boolean'
      ? boolean
      : Name extends 'null'
        ? null
        : Name extends 'array'
          ? ArrayOf<S>
          : Name extends 'object'
            ? ObjectOf<S>
            : never;

type ArrayOf<S> = S extends { readonly items: infer Items } ? InferSchema<Items>[] : JsonValue[];

type PropertiesOf<S> = S extends { readonly properties: infer Properties }
  ? Properties
  : Record<never, never>;

type RequiredOf<S> = S extends { readonly required: readonly (infer Key extends string)[] } ? Key : never;

type OtherKeysOf<S> = S extends { readonly additionalProperties: false }
  ? Record<never, never>
  : S extends { readonly additionalProperties: infer Other extends JsonSchema }
    ? { [key: string]: InferSchema<Other> }
    : { [key: string]: JsonValue };

type ObjectOf<S, P = PropertiesOf<S>, R = RequiredOf<S>> = Flatten<
  { -readonly [K in keyof P as K extends R ? K : never]: InferSchema<P[K]> } & {
    -readonly [K in keyof P as K extends R ? never : K]?: InferSchema<P[K]>;
  } & { [K in Exclude<R & string, keyof P>]: JsonValue } & OtherKeysOf<S>
>;

/** One object type instead of an intersection, so editors show `{ city: string; days?: number }`. */
type Flatten<T> = T extends infer O ? { [K in keyof O]: O[K] } : never;

/** A `const` or `enum` value as `args` holds it: decoded JSON, whose arrays are not readonly. */
type Writable<T> = T extends string | number | boolean | null
  ? T
  : { -readonly [K in keyof T]: Writable<T[K]> };

/** How a call shares its turn with the other calls of the same model reply. */
export type ToolConcurrency = 'parallel' | 'exclusive';

/** The media types the Messages API accepts for image content. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** A text content block, shaped as the Messages API expects inside a `tool_result`. */
export interface TextContentBlock {
  type: 'text';
  text: string;
}

/** An image content block (base64 data), shaped as the Messages API expects inside a `tool_result`. */
export interface ImageContentBlock {
  type: 'image';
  source: { type: 'base64'; media_type: ImageMediaType; data: string };
}

/** The audio media types toolhost checks (by their first bytes) and passes on. */
export type AudioMediaType =
  | 'audio/wav'
  | 'audio/mpeg'
  | 'audio/ogg'
  | 'audio/flac'
  | 'audio/webm'
  | 'audio/mp4'
  | 'audio/aac';

/**
 * An audio block (base64 data), shaped like an image block. MCP clients get it as audio content; the
 * Messages API has no audio block, so the loop sends a text stand-in in its place.
 */
export interface AudioContentBlock {
  type: 'audio';
  source: { type: 'base64'; media_type: AudioMediaType; data: string };
}

/** The contents of an embedded resource: text, or base64 bytes (`blob`). */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string }
  | { uri: string; mimeType?: string; blob: string };

/**
 * A resource embedded in the result (MCP's embedded resource). The loop sends a text resource's text
 * to the model, and a stand-in naming a binary one.
 */
export interface ResourceContentBlock {
  type: 'resource';
  resource: ResourceContents;
}

/** A link to a resource the client may fetch itself (MCP's resource link); the loop sends it as text. */
export interface ResourceLinkContentBlock {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Its size in bytes, when known. */
  size?: number;
}

/** What a tool result may contain. */
export type ToolContentBlock =
  | TextContentBlock
  | ImageContentBlock
  | AudioContentBlock
  | ResourceContentBlock
  | ResourceLinkContentBlock;

/**
 * What a tool says about its own behaviour (MCP's tool annotations). They are the tool's claims:
 * toolhost passes them on and never relies on them, and a client must not trust them either.
 */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** The context every call (and selftest) receives. */
export interface ToolContext {
  /** The caller's session, `"default"` unless the caller names one. */
  readonly sessionId: string;
  /** Unique per call; the `tool_use` id when the call comes from the loop. */
  readonly callId: string;
  /** The host's data directory (where full outputs of cut results are kept). */
  readonly dataDir: string;
  /** A fresh directory for this call only, created on first use and removed when the call ends. */
  readonly tmpDir: string;
  /** Names of tools the current loop does not offer (empty outside a loop). */
  readonly withheld: readonly string[];
  /** Aborted when the call times out (shortly before the worker is terminated) or is cancelled. */
  readonly signal: AbortSignal;
  /** Sends progress data to the host's screens (the host's `progress` event). Plain data only. */
  emit(data: JsonValue): void;
}

/** A declaration field may be a value or a zero-argument function returning it. */
export type Declared<T> = T | (() => T);

/**
 * One tool module: its declaration and behaviour, as named exports or one default-exported object.
 * `run` gets a {@link JsonObject}; for arguments typed from the schema, see {@link defineTool} and
 * {@link ToolDefinition}. In a JavaScript module, JSDoc gives the same: `@type
 * {import('toolhost/tool').ToolModule}` on the default-exported object.
 */
export interface ToolModule {
  name: Declared<string>;
  description: Declared<string>;
  parameterSchema: Declared<JsonSchema>;
  timeoutMs?: Declared<number>;
  concurrency?: Declared<ToolConcurrency>;
  /** A title for people (MCP clients show it); the model reads `name` and `description`. */
  title?: Declared<string>;
  annotations?: Declared<ToolAnnotations>;
  /** A JSON Schema (root `type: "object"`) that a structured result is validated against on the host. */
  outputSchema?: Declared<JsonSchema>;
  run(args: JsonObject, ctx: ToolContext): unknown;
  selftest?(ctx: ToolContext): unknown;
}

/**
 * A typed tool, as {@link defineTool} takes and returns it: plain values, `run`'s arguments inferred
 * from `Schema`. JSDoc: `@type {import('toolhost/tool').ToolDefinition<typeof parameterSchema>}`,
 * with the schema declared `@type {const}`.
 */
export interface ToolDefinition<Schema extends ParameterSchema> {
  name: string;
  description: string;
  parameterSchema: Schema;
  /** @default 30000 */
  timeoutMs?: number;
  /** @default 'parallel' */
  concurrency?: ToolConcurrency;
  title?: string;
  annotations?: ToolAnnotations;
  outputSchema?: JsonSchema & { readonly type: 'object' };
  run(args: InferSchema<Schema>, ctx: ToolContext): unknown;
  selftest?(ctx: ToolContext): unknown;
}

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
