/**
 * The one Ajv instance (JSON Schema draft 2020-12), created on first use, and the compiled input
 * validators it produces. Schemas come from untrusted tool modules: they are compiled once per
 * module version and never added to the instance's registry (two tools may use the same `$id`).
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

let ajv: Ajv2020 | undefined;

function instance(): Ajv2020 {
  ajv ??= new Ajv2020({
    allErrors: true,
    // Real-world tool schemas carry annotations (`format`, `examples`, vendor keys): accept them.
    strict: false,
    validateFormats: false,
    addUsedSchema: false,
  });
  return ajv;
}

/** A compiled validator for a tool's arguments. */
export type InputValidator = ValidateFunction;

export type SchemaCheck = { ok: true; validate: InputValidator } | { ok: false; message: string };

/** Checks a parameter schema (root `type: "object"`, valid 2020-12) and compiles it once. */
export function compileParameterSchema(schema: unknown): SchemaCheck {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return { ok: false, message: `parameterSchema must be a JSON Schema object, got ${describe(schema)}` };
  }
  if ((schema as Record<string, unknown>)['type'] !== 'object') {
    return { ok: false, message: 'parameterSchema must have `"type": "object"` at its root' };
  }
  try {
    return { ok: true, validate: instance().compile(schema) };
  } catch (error) {
    return { ok: false, message: `parameterSchema does not compile: ${(error as Error).message}` };
  }
}

/** Forgets a compiled schema (a module version that went away), so the Ajv cache doesn't grow. */
export function forgetSchema(schema: object): void {
  ajv?.removeSchema(schema);
}

export type InputCheck = { valid: true } | { valid: false; errors: string[] };

/** Validates a call's input; the messages are written for the model to fix its input. */
export function validateInput(validate: InputValidator, input: unknown): InputCheck {
  if (validate(input)) return { valid: true };
  return { valid: false, errors: (validate.errors ?? []).map(formatError) };
}

function formatError(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'the input' : error.instancePath;
  const params =
    error.keyword === 'additionalProperties' ? ` (${String(error.params['additionalProperty'])})` : '';
  return `${where} ${error.message ?? 'is invalid'}${params}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
