/**
 * A raw declaration (as read in the throwaway worker) becomes a checked {@link ToolInfo}, or a
 * rejection with a reason. Required fields decide whether a tool is offered; a bad `timeoutMs` or
 * `concurrency` only means the default.
 */
import type { LeftOutCode } from '../boundary/errors.js';
import { checkPlainData, MAX_DATA_DEPTH } from '../boundary/plain-data.js';
import { type FieldRead, MAX_FIELD_BYTES, type RawDeclaration } from '../boundary/protocol.js';
import type { JsonObject, ToolAnnotations, ToolConcurrency } from '../boundary/tool-contract.js';
import {
  compileObjectSchema,
  compileParameterSchema,
  type InputValidator,
  type SchemaLimits,
} from '../schema/json-schema.js';
import { findHiddenInDeclaration, showHidden } from './visible-text.js';

/** A tool's checked declaration. */
export interface ToolInfo {
  name: string;
  description: string;
  parameterSchema: JsonObject;
  /** @default 30000 */
  timeoutMs: number;
  /** @default 'parallel' */
  concurrency: ToolConcurrency;
  /** A title for people, when the tool declares one. */
  title?: string;
  /** The tool's own claims about its behaviour, when it makes any: passed on, never trusted. */
  annotations?: ToolAnnotations;
  /** The JSON Schema its structured results are checked against on the host, when it declares one. */
  outputSchema?: JsonObject;
}

/** The longest `title` a declaration may have. */
export const MAX_TITLE_LENGTH = 256;

/** The annotations a declaration may carry; each one a boolean. */
export const ANNOTATION_HINTS = [
  'readOnlyHint',
  'destructiveHint',
  'idempotentHint',
  'openWorldHint',
] as const;

/** The per-call timeout of a tool that doesn't declare a valid one. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** What the API accepts as a tool name. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** Why a declaration is refused: `field` names the field at fault, `location` where it threw. */
export interface RefusedDeclaration {
  ok: false;
  code: LeftOutCode;
  reason: string;
  field?: string;
  location?: string;
}

export type CheckedDeclaration =
  | {
      ok: true;
      info: ToolInfo;
      validate: InputValidator;
      /** The compiled `outputSchema`, when the tool declares one. */
      validateOutput?: InputValidator;
      hasSelftest: boolean;
    }
  | RefusedDeclaration;

/** The longest timeout Node's timers take (a larger one fires at once, with a warning, every time). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export function checkDeclaration(raw: RawDeclaration, schemaLimits: SchemaLimits): CheckedDeclaration {
  const name = requiredField('name', raw.name);
  if (!name.ok) return name;
  if (typeof name.value !== 'string' || !TOOL_NAME_PATTERN.test(name.value)) {
    return invalid(`name must match ${TOOL_NAME_PATTERN.source}, got ${preview(name.value)}`, 'name');
  }
  const description = requiredField('description', raw.description);
  if (!description.ok) return description;
  if (typeof description.value !== 'string') {
    return invalid(`description must be a string, got ${preview(description.value)}`, 'description');
  }
  if (raw.parameterSchema.state === 'missing' && raw.misnamedSchema !== null) {
    return invalid(
      `parameterSchema is missing and the module declares \`${raw.misnamedSchema}\`: did you mean \`parameterSchema\`?`,
      raw.misnamedSchema,
    );
  }
  const schema = requiredField('parameterSchema', raw.parameterSchema);
  if (!schema.ok) return schema;
  const compiled = compileParameterSchema(schema.value, schemaLimits);
  if (!compiled.ok) return invalid(compiled.message, 'parameterSchema');
  const rich = checkRichFields(raw, schemaLimits);
  if (!rich.ok) return rich;
  if (!raw.hasRun) return invalid('the module exports no run function');

  const info: ToolInfo = {
    name: name.value,
    description: description.value,
    parameterSchema: schema.value as JsonObject,
    timeoutMs: checkTimeoutMs(optionalValue(raw.timeoutMs)),
    concurrency: optionalValue(raw.concurrency) === 'exclusive' ? 'exclusive' : 'parallel',
  };
  const checked: CheckedDeclaration = {
    ok: true,
    info,
    validate: compiled.validate,
    hasSelftest: raw.hasSelftest,
  };
  if (rich.title !== undefined) info.title = rich.title;
  if (rich.annotations !== undefined) info.annotations = rich.annotations;
  if (rich.output !== undefined) {
    info.outputSchema = rich.output.schema;
    checked.validateOutput = rich.output.validate;
  }
  // Every field of the checked declaration, whatever fields it has: all of it reaches a model or a client.
  const hidden = findHiddenInDeclaration(info);
  if (hidden !== undefined) return invalid(hidden.reason, hidden.field);
  return checked;
}

/** The optional MCP fields of a declaration, checked (for module tools and the host's own alike). */
export type RichFields =
  | {
      ok: true;
      title?: string | undefined;
      annotations?: ToolAnnotations | undefined;
      output?: { schema: JsonObject; validate: InputValidator } | undefined;
    }
  | RefusedDeclaration;

/** Checks `title`, `annotations` and `outputSchema`: each absent, or well formed. */
export function checkRichFields(
  reads: { title: FieldRead; annotations: FieldRead; outputSchema: FieldRead },
  schemaLimits: SchemaLimits,
): RichFields {
  const title = checkTitle(reads.title);
  if (!title.ok) return title;
  const annotations = checkAnnotations(reads.annotations);
  if (!annotations.ok) return annotations;
  const output = checkOutputSchema(reads.outputSchema, schemaLimits);
  if (!output.ok) return output;
  return { ok: true, title: title.value, annotations: annotations.value, output: output.value };
}

type Optional<T> = { ok: true; value: T | undefined } | RefusedDeclaration;

/** An optional field: absent is fine; one that threw or is not plain data leaves the tool out. */
function optionalField(field: string, read: FieldRead): Optional<unknown> {
  return read.state === 'missing' ? { ok: true, value: undefined } : requiredField(field, read);
}

function checkTitle(read: FieldRead): Optional<string> {
  const title = optionalField('title', read);
  if (!title.ok || title.value === undefined) return title as Optional<string>;
  const { value } = title;
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_TITLE_LENGTH) {
    return invalid(
      `title must be a string of 1 to ${MAX_TITLE_LENGTH} characters, got ${preview(value)}`,
      'title',
    );
  }
  return { ok: true, value };
}

function checkAnnotations(read: FieldRead): Optional<ToolAnnotations> {
  const annotations = optionalField('annotations', read);
  if (!annotations.ok || annotations.value === undefined) return annotations as Optional<ToolAnnotations>;
  const { value } = annotations;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(`annotations must be an object of boolean hints, got ${preview(value)}`, 'annotations');
  }
  const hints: ToolAnnotations = {};
  for (const [key, hint] of Object.entries(value)) {
    if (!(ANNOTATION_HINTS as readonly string[]).includes(key)) {
      return invalid(
        `annotations has an unknown hint ${preview(key)}; the hints are ${ANNOTATION_HINTS.join(', ')}`,
        'annotations',
      );
    }
    if (typeof hint !== 'boolean') {
      return invalid(`annotations.${key} must be a boolean, got ${preview(hint)}`, 'annotations');
    }
    hints[key as keyof ToolAnnotations] = hint;
  }
  return { ok: true, value: hints };
}

function checkOutputSchema(
  read: FieldRead,
  schemaLimits: SchemaLimits,
): Optional<{ schema: JsonObject; validate: InputValidator }> {
  const schema = optionalField('outputSchema', read);
  if (!schema.ok || schema.value === undefined) return schema as Optional<never>;
  const compiled = compileObjectSchema(schema.value, schemaLimits, 'outputSchema');
  if (!compiled.ok) return invalid(compiled.message, 'outputSchema');
  return { ok: true, value: { schema: schema.value as JsonObject, validate: compiled.validate } };
}

/** A positive integer a timer can wait for (up to 2^31 - 1 ms), or the default for anything else. */
export function checkTimeoutMs(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_TIMEOUT_MS
    ? value
    : DEFAULT_TOOL_TIMEOUT_MS;
}

function requiredField(field: string, read: FieldRead): { ok: true; value: unknown } | RefusedDeclaration {
  switch (read.state) {
    case 'missing':
      return invalid(`${field} is missing`, field);
    case 'threw': {
      const threw: RefusedDeclaration = {
        ok: false,
        code: 'DECLARATION_THREW',
        reason: `${field} threw: ${read.message}`,
        field,
      };
      if (read.location !== undefined) threw.location = read.location;
      return threw;
    }
    case 'not-plain':
      return {
        ok: false,
        code: 'DECLARATION_NOT_PLAIN',
        reason: `${field} is not plain data: ${read.message}`,
        field,
      };
    case 'value': {
      // The value crossed a structured clone; check again on this side of the boundary.
      const check = checkPlainData(
        read.value,
        { maxDepth: MAX_DATA_DEPTH, maxBytes: MAX_FIELD_BYTES },
        field,
      );
      if (!check.ok) {
        return {
          ok: false,
          code: 'DECLARATION_NOT_PLAIN',
          reason: `${field} is not plain data: ${check.problem}`,
          field,
        };
      }
      return { ok: true, value: read.value };
    }
  }
}

function optionalValue(read: FieldRead): unknown {
  return read.state === 'value' ? read.value : undefined;
}

function invalid(reason: string, field = 'run'): RefusedDeclaration {
  return { ok: false, code: 'DECLARATION_INVALID', reason, field };
}

function preview(value: unknown): string {
  const json = JSON.stringify(value);
  const shown = json === undefined ? String(value) : json.length > 80 ? `${json.slice(0, 77)}...` : json;
  // A refused name is shown in the reason: never with the bidirectional controls it was made of.
  return showHidden(shown);
}
