/**
 * A schema field declared as a schema library's object (zod, valibot, arktype, …) rather than as
 * JSON Schema: one that implements Standard JSON Schema (`~standard.jsonSchema`, as zod 4 does, and
 * as the output of zod's `z.toJSONSchema()` carries it) is converted here, in the throwaway reader,
 * where the module's code may run. What comes out is checked as plain data like any other value,
 * and again on the host: what the model reads is still plain JSON Schema.
 */

/** The JSON Schema dialect asked for: the one toolhost compiles (ajv's 2020-12). */
const TARGET = 'draft-2020-12';

export type SchemaConversion =
  | { kind: 'plain' }
  | { kind: 'converted'; value: unknown }
  | { kind: 'refused'; message: string };

/**
 * `value` as JSON Schema: `plain` when it is no Standard Schema (checked as it is), `converted`
 * when its library converted it, `refused` when it is a Standard Schema that can't be converted.
 * Throws what the library throws (the caller reports it as the field's throw).
 */
export function fromStandardSchema(
  value: unknown,
  field: 'parameterSchema' | 'outputSchema',
): SchemaConversion {
  if (typeof value !== 'object' || value === null) return { kind: 'plain' };
  // Inherited on a zod schema, non-enumerable on zod's JSON Schema output: read either way (a
  // getter runs the module's code, here in its reader, which is where that may happen).
  const standard: unknown = (value as Record<string, unknown>)['~standard'];
  if (typeof standard !== 'object' || standard === null) return { kind: 'plain' };
  const props = standard as { vendor?: unknown; jsonSchema?: { input?: unknown; output?: unknown } };
  const vendor = typeof props.vendor === 'string' ? props.vendor.slice(0, 64) : 'unknown';
  // What the model writes is the schema's input; what a tool returns, its output.
  const convert = field === 'parameterSchema' ? props.jsonSchema?.input : props.jsonSchema?.output;
  if (typeof convert !== 'function') {
    return {
      kind: 'refused',
      message: `it is a Standard Schema (vendor "${vendor}") that does not implement Standard JSON Schema (~standard.jsonSchema), so it can't be turned into the JSON Schema the model reads: export its JSON Schema instead (for valibot, toJsonSchema from @valibot/to-json-schema; for zod 4, the schema itself or z.toJSONSchema(schema))`,
    };
  }
  const converted = (convert as (options: { target: string }) => unknown)({ target: TARGET });
  // JSON Schema is JSON: zod's output carries its own `~standard` again, non-enumerable, which
  // JSON leaves behind. A value JSON can't hold comes out as the plain-data check then finds it.
  const text = JSON.stringify(converted);
  return { kind: 'converted', value: text === undefined ? converted : JSON.parse(text) };
}
