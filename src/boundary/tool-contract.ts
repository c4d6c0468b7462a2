/**
 * The types a tool module is written against: the module's shape, its declaration fields, the
 * context a call receives and the content blocks it may return. They describe what crosses between
 * a tool's worker and the host, so the worker side imports them from here; tool authors get them
 * from `toolhost/tool` (the helpers module re-exports them all). Types only: nothing here exists at
 * run time.
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
