/**
 * Type tests for typed tools (checked by `npm run typecheck`): `defineTool` infers `run`'s arguments
 * from a literal `parameterSchema`, so a wrong property access fails to compile; what it returns is a
 * plain tool module.
 */
import { expectTypeOf } from 'vitest';
import type { defineTool as DefineTool } from '../dist/src/tool-module.js';
import {
  defineTool,
  type InferSchema,
  type JsonObject,
  type JsonValue,
  type ToolContext,
  type ToolDefinition,
  type ToolModule,
} from '../dist/src/tool-module.js';

// docs/writing-tools.md's weather tool: required and optional properties, no other keys.
const weather = defineTool({
  name: 'weather',
  description: 'Current weather for a city',
  parameterSchema: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      days: { type: 'integer' },
      units: { enum: ['metric', 'imperial'] },
    },
    required: ['city'],
    additionalProperties: false,
  },
  run(args, ctx) {
    expectTypeOf(args).toEqualTypeOf<{ city: string; days?: number; units?: 'metric' | 'imperial' }>();
    expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
    expectTypeOf(args.city).toBeString();
    // @ts-expect-error: a misspelt property is not in the schema
    void args.cty;
    // @ts-expect-error: `days` is optional, so it may be missing
    args.days.toFixed();
    // @ts-expect-error: a string property is not a number
    args.city.toFixed();
    return `${args.city.toUpperCase()}: ${args.days ?? 1} days`;
  },
  async selftest(ctx) {
    expectTypeOf(ctx.tmpDir).toBeString();
  },
});

// What defineTool returns is the plain module shape the contract accepts, and a host tool too.
const weatherModule: ToolModule = weather;
void weatherModule;
declare const host: import('../dist/src/index.js').ToolHost;
host.register(weather);
expectTypeOf(weather.name).toBeString();
expectTypeOf(weather.parameterSchema.required).toEqualTypeOf<readonly ['city']>();

// Nested objects, arrays, lists of types, anyOf, and const.
defineTool({
  name: 'shapes',
  description: 'Every keyword the inference reads',
  parameterSchema: {
    type: 'object',
    properties: {
      tags: { type: 'array', items: { type: 'string' } },
      point: {
        type: 'object',
        properties: { x: { type: 'number' }, y: { type: 'number' } },
        required: ['x', 'y'],
        additionalProperties: false,
      },
      note: { type: ['string', 'null'] },
      size: { anyOf: [{ type: 'integer' }, { enum: ['small', 'large'] }] },
      version: { const: 2 },
      anything: {},
    },
    required: ['point'],
    additionalProperties: false,
  },
  run(args) {
    expectTypeOf(args.tags).toEqualTypeOf<string[] | undefined>();
    expectTypeOf(args.point).toEqualTypeOf<{ x: number; y: number }>();
    expectTypeOf(args.note).toEqualTypeOf<string | null | undefined>();
    expectTypeOf(args.size).toEqualTypeOf<number | 'small' | 'large' | undefined>();
    expectTypeOf(args.version).toEqualTypeOf<2 | undefined>();
    expectTypeOf(args.anything).toEqualTypeOf<JsonValue | undefined>();
    // @ts-expect-error: a nested misspelling fails too
    void args.point.z;
  },
});

// Without `additionalProperties: false` other keys are allowed: an index signature, so (under this
// project's noPropertyAccessFromIndexSignature) only bracket access compiles.
defineTool({
  name: 'open',
  description: 'Accepts other keys',
  parameterSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  run(args) {
    expectTypeOf(args.query).toBeString();
    expectTypeOf(args['other']).toEqualTypeOf<JsonValue | undefined>();
    // @ts-expect-error: an unlisted key is not a declared property
    void args.other;
  },
});

// The root must be an object schema (the contract's rule).
defineTool({
  name: 'bad_root',
  description: 'Not an object schema',
  // @ts-expect-error: parameterSchema's root type must be "object"
  parameterSchema: { type: 'string' },
  run() {},
});

// A schema declared apart (`as const`) types a ToolDefinition, as JSDoc's `ToolDefinition<typeof schema>` does.
const searchSchema = {
  type: 'object',
  properties: { query: { type: 'string' }, limit: { type: 'integer' } },
  required: ['query'],
  additionalProperties: false,
} as const;
expectTypeOf<InferSchema<typeof searchSchema>>().toEqualTypeOf<{ query: string; limit?: number }>();
const search: ToolDefinition<typeof searchSchema> = {
  name: 'search',
  description: 'Searches',
  parameterSchema: searchSchema,
  run(args) {
    expectTypeOf(args.query).toBeString();
    // @ts-expect-error: not in the schema
    void args.limt;
  },
};
const searchModule: ToolModule = search;
void searchModule;

// The untyped module keeps JSON objects as arguments, and accepts callback-style declarations.
const untyped: ToolModule = {
  name: () => 'untyped',
  description: 'Declared by functions',
  parameterSchema: () => ({ type: 'object' }),
  run(args) {
    expectTypeOf(args).toEqualTypeOf<JsonObject>();
  },
};
void untyped;

// docs/writing-tools.md's way to stay free of a run-time import: toolhost's type on a local identity function.
const localDefineTool: typeof DefineTool = (tool) => tool;
localDefineTool({
  name: 'local',
  description: 'Typed by toolhost, defined locally',
  parameterSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run({ text }) {
    expectTypeOf(text).toBeString();
  },
});
