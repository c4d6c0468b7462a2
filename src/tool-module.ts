/**
 * The tool module contract (what a third-party package ships) and the small, dependency-free helpers
 * tool authors use to build tagged results. This file has no imports so that it can be loaded cheaply
 * from `toolhost/tool` inside a tool's worker.
 */

/** A JSON value: what crosses between the host, the workers and the model. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

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

/** What a tool result may contain. */
export type ToolContentBlock = TextContentBlock | ImageContentBlock;

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
 */
export interface ToolModule {
  name: Declared<string>;
  description: Declared<string>;
  parameterSchema: Declared<JsonObject>;
  timeoutMs?: Declared<number>;
  concurrency?: Declared<ToolConcurrency>;
  run(args: JsonObject, ctx: ToolContext): unknown;
  selftest?(ctx: ToolContext): unknown;
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
 * A result with content blocks (text and images) and optional `details` for the host's screens.
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
