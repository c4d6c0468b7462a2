/**
 * A raw declaration (as read in the throwaway worker) becomes a checked {@link ToolInfo}, or a
 * rejection with a reason. Required fields decide whether a tool is offered; a bad `timeoutMs` or
 * `concurrency` only means the default.
 */
import type { LeftOutCode } from '../boundary/errors.js';
import { checkPlainData, MAX_DATA_DEPTH } from '../boundary/plain-data.js';
import { type FieldRead, MAX_FIELD_BYTES, type RawDeclaration } from '../boundary/protocol.js';
import { compileParameterSchema, type InputValidator, type SchemaLimits } from '../schema/json-schema.js';
import type { JsonObject, ToolConcurrency } from '../tool-module.js';
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
}

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
  | { ok: true; info: ToolInfo; validate: InputValidator; hasSelftest: boolean }
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
  const schema = requiredField('parameterSchema', raw.parameterSchema);
  if (!schema.ok) return schema;
  const compiled = compileParameterSchema(schema.value, schemaLimits);
  if (!compiled.ok) return invalid(compiled.message, 'parameterSchema');
  if (!raw.hasRun) return invalid('the module exports no run function');

  const info: ToolInfo = {
    name: name.value,
    description: description.value,
    parameterSchema: schema.value as JsonObject,
    timeoutMs: checkTimeoutMs(optionalValue(raw.timeoutMs)),
    concurrency: optionalValue(raw.concurrency) === 'exclusive' ? 'exclusive' : 'parallel',
  };
  // Every field of the checked declaration, whatever fields it has: all of it reaches a model or a client.
  const hidden = findHiddenInDeclaration(info);
  if (hidden !== undefined) return invalid(hidden.reason, hidden.field);
  return { ok: true, info, validate: compiled.validate, hasSelftest: raw.hasSelftest };
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
