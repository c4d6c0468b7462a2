/**
 * Parameter schemas (JSON Schema draft 2020-12, or draft-07 when `$schema` says so) and the input validators compiled from them.
 * Schemas come from untrusted tool modules, so before Ajv sees one it is bounded (size, depth, no
 * `$async`), and each is compiled by an Ajv instance of its own: an `$id` (even the meta-schema's
 * URI) or `removeSchema` can't touch what another module or another host compiled. One shared
 * instance only checks schemas against the meta-schema, which adds nothing to it.
 */
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { checkPlainData } from '../boundary/plain-data.js';
import { linearRegExpEngine } from './linear-regexp.js';

const OPTIONS: Options = {
  allErrors: true,
  // Real-world tool schemas carry annotations (`format`, `examples`, vendor keys): accept them.
  strict: false,
  validateFormats: false,
  addUsedSchema: false,
  // Inlining copies a referenced schema into every place that refers to it: 300 references to one
  // 2 KB definition took 3.7 s to compile, against 36 ms without.
  inlineRefs: false,
};

/** How large a parameter schema may be before the host compiles it. */
export interface SchemaLimits {
  /** About the size of its JSON, in UTF-8 bytes. @default 65536 */
  maxSchemaBytes: number;
  /** How deep its objects and arrays may nest. @default 32 */
  maxSchemaDepth: number;
}

/**
 * Ajv's class, loaded when the first schema is checked: importing toolhost loads none of Ajv's code
 * generation (about 90 modules), and a host that only calls its own tools never does.
 */
let ajvClass: typeof Ajv2020 | undefined;
let draft07Class: typeof Ajv2020 | undefined;
function newAjv(options: Options, dialect: Dialect = '2020-12'): Ajv2020 {
  if (dialect === 'draft-07') {
    // Ajv's default class is draft-07; its API is the 2020 class's.
    draft07Class ??= (createRequire(import.meta.url)('ajv') as { Ajv: typeof Ajv2020 }).Ajv;
    return new draft07Class(options);
  }
  ajvClass ??= (createRequire(import.meta.url)('ajv/dist/2020') as { Ajv2020: typeof Ajv2020 }).Ajv2020;
  return new ajvClass(options);
}

export const DEFAULT_SCHEMA_LIMITS: SchemaLimits = { maxSchemaBytes: 65_536, maxSchemaDepth: 32 };

/**
 * The JSON Schema drafts a schema may be written in: 2020-12 (the default), or draft-07 when its
 * `$schema` says so (what zod-to-json-schema writes, and so what many MCP servers send).
 */
export type Dialect = '2020-12' | 'draft-07';

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

/** The draft `schema` declares with its `$schema`; 2020-12 when it declares none (or another). */
export function dialectOf(schema: object): Dialect {
  const declared = (schema as Record<string, unknown>)['$schema'];
  return typeof declared === 'string' && DRAFT_07.test(declared) ? 'draft-07' : '2020-12';
}

const metaCheckers = new Map<Dialect, Ajv2020>();

/** Only validates schemas against their draft's meta-schema; it never compiles or keeps a tool's schema. */
function checkAgainstMetaSchema(schema: object): string | undefined {
  const dialect = dialectOf(schema);
  let metaChecker = metaCheckers.get(dialect);
  if (metaChecker === undefined) {
    metaChecker = newAjv(OPTIONS, dialect);
    metaCheckers.set(dialect, metaChecker);
  }
  try {
    // Draft-07 is written with http:// or https://; Ajv knows its meta-schema by the http:// id only.
    const valid =
      dialect === 'draft-07'
        ? metaChecker.validate('http://json-schema.org/draft-07/schema', schema)
        : metaChecker.validateSchema(schema);
    if (valid === true) return undefined;
    return metaChecker.errorsText(metaChecker.errors, { dataVar: 'schema' });
  } catch (error) {
    return (error as Error).message;
  }
}

/** A compiled validator for a tool's arguments. */
export type InputValidator = ValidateFunction;

export type SchemaCheck = { ok: true; validate: InputValidator } | { ok: false; message: string };

/**
 * Checks a parameter schema (plain data within `limits`, root `type: "object"`, no `$async`, valid
 * 2020-12) and compiles it, once, with an Ajv instance of its own.
 */
export function compileParameterSchema(
  schema: unknown,
  limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS,
): SchemaCheck {
  return compileObjectSchema(schema, limits, 'parameterSchema');
}

/**
 * {@link compileParameterSchema} for any of a declaration's object schemas (`outputSchema` too):
 * the same bounds, the same Ajv setup; `field` names it in the messages.
 */
export function compileObjectSchema(schema: unknown, limits: SchemaLimits, field: string): SchemaCheck {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return { ok: false, message: `${field} must be a JSON Schema object, got ${describe(schema)}` };
  }
  const size = checkPlainData(
    schema,
    { maxDepth: limits.maxSchemaDepth, maxBytes: limits.maxSchemaBytes },
    field,
  );
  if (!size.ok) return { ok: false, message: size.problem };
  if ((schema as Record<string, unknown>)['type'] !== 'object') {
    return { ok: false, message: `${field} must have \`"type": "object"\` at its root` };
  }
  // An async schema's validator returns a promise, which would count as valid input.
  const asyncAt = findKey(schema, '$async', field);
  if (asyncAt !== undefined) return { ok: false, message: `${field} uses \`$async\` (at ${asyncAt})` };
  // Validating an input costs about as much as the schema is large with every `$ref` expanded: a few
  // references that each refer twice to the next double it per step (40 steps, 2^40 checks per call,
  // on the host's thread). Bounded before anything compiles it.
  const expanded = expandedSize(schema, MAX_EXPANDED_NODES);
  if (expanded > MAX_EXPANDED_NODES) {
    return {
      ok: false,
      message: `${field} expands to more than ${MAX_EXPANDED_NODES} subschemas through its $refs`,
    };
  }
  const invalid = checkAgainstMetaSchema(schema);
  if (invalid !== undefined) return { ok: false, message: `${field} is not valid JSON Schema: ${invalid}` };
  try {
    // Patterns run in linear time (a backtracking `pattern` would stop the host on one input).
    const ajv = newAjv(
      { ...OPTIONS, validateSchema: false, code: { regExp: linearRegExpEngine } },
      dialectOf(schema),
    );
    return { ok: true, validate: ajv.compile(schema) };
  } catch (error) {
    return { ok: false, message: `${field} does not compile: ${(error as Error).message}` };
  }
}

/** The most subschemas a parameter schema may hold with its `$ref`s expanded. */
export const MAX_EXPANDED_NODES = 20_000;

/**
 * How many objects and arrays `schema` holds with each local `$ref` / `$dynamicRef` (`#…`) counted
 * as the size of what it refers to (a reference back into its own expansion counts once, as
 * recursion that descends into the data does). Stops counting past `limit`.
 */
export function expandedSize(schema: object, limit: number): number {
  const sizes = new Map<string, number>();
  const expanding = new Set<string>();
  const sizeOfRef = (ref: unknown): number => {
    if (typeof ref !== 'string' || !ref.startsWith('#')) return 0;
    const known = sizes.get(ref);
    if (known !== undefined) return known;
    if (expanding.has(ref)) return 1;
    const target = resolvePointer(schema, ref);
    if (target === undefined) return 0;
    expanding.add(ref);
    const size = sizeOf(target);
    expanding.delete(ref);
    sizes.set(ref, size);
    return size;
  };
  const sizeOf = (node: unknown): number => {
    if (typeof node !== 'object' || node === null) return 0;
    let size = 1;
    for (const [key, value] of Object.entries(node)) {
      size += key === '$ref' || key === '$dynamicRef' ? sizeOfRef(value) : sizeOf(value);
      if (size > limit) return size;
    }
    return size;
  };
  return sizeOf(schema);
}

/** The value a local JSON pointer (`#/$defs/a`, or `#anchor`) names inside `root`. */
function resolvePointer(root: object, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return findAnchor(root, ref.slice(1));
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, part)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function findAnchor(node: unknown, anchor: string): unknown {
  if (typeof node !== 'object' || node === null) return undefined;
  const record = node as Record<string, unknown>;
  if (record['$anchor'] === anchor || record['$dynamicAnchor'] === anchor) return node;
  for (const value of Object.values(record)) {
    const found = findAnchor(value, anchor);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Where `key` appears as a property anywhere inside `value` (already checked to be bounded plain data). */
function findKey(value: unknown, key: string, at: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (!Array.isArray(value) && Object.hasOwn(value, key)) return at;
  for (const [name, inner] of Object.entries(value)) {
    const found = findKey(inner, key, Array.isArray(value) ? `${at}[${name}]` : `${at}.${name}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

export type InputCheck = { valid: true } | { valid: false; errors: string[] };

/**
 * Checks a structured result against the tool's compiled `outputSchema`. Never throws (as
 * {@link validateInput}); the messages name where the result breaks the schema.
 */
export function validateOutput(validate: InputValidator, output: unknown): InputCheck {
  try {
    if (validate(output) === true) return { valid: true };
    return { valid: false, errors: (validate.errors ?? []).slice(0, 10).map(formatOutputError) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { valid: false, errors: [`the tool's outputSchema could not check the result: ${reason}`] };
  }
}

function formatOutputError(error: ErrorObject): string {
  return formatError(error).replace(/^the input\b/, 'the result');
}

/**
 * Validates a call's input; the messages are written for the model to fix its input. Never throws: a
 * schema that refers to itself in place (`{ anyOf: [{ $ref: '#/$defs/self' }] }`) compiles, then
 * overflows the stack on every value, and that is the tool's schema failing, not the host.
 */
export function validateInput(validate: InputValidator, input: unknown): InputCheck {
  try {
    if (validate(input) === true) return { valid: true };
    return { valid: false, errors: (validate.errors ?? []).map(formatError) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { valid: false, errors: [`the tool's parameterSchema could not check the input: ${reason}`] };
  }
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
