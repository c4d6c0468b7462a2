/**
 * The host's own tools (trusted, in-process): checked when they are registered, with one clear
 * error per mistake.
 */

import { ToolHostError } from '../boundary/errors.js';
import type { FieldRead } from '../boundary/protocol.js';
import type { JsonObject } from '../boundary/tool-contract.js';
import { checkRichFields, checkTimeoutMs, TOOL_NAME_PATTERN, type ToolInfo } from '../declaration/check.js';
import { compileParameterSchema, type SchemaLimits } from '../schema/json-schema.js';
import type { HostTool, OfferedTool } from './generation.js';

/** `tool` as an offered tool, or a {@link ToolHostError} saying what is wrong with it. */
export function offeredHostTool(
  tool: HostTool,
  isTaken: (name: string) => boolean,
  schemaLimits: SchemaLimits,
): OfferedTool {
  if (typeof tool !== 'object' || tool === null) {
    throw new ToolHostError(
      'INVALID_OPTION',
      'Expected a tool object with name, description, parameterSchema and run',
    );
  }
  if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`name\` to match ${TOOL_NAME_PATTERN.source}, got ${JSON.stringify(tool.name)}`,
    );
  }
  if (typeof tool.description !== 'string') {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected \`description\` of tool "${tool.name}" to be a string`,
    );
  }
  if (typeof tool.run !== 'function') {
    throw new ToolHostError('INVALID_OPTION', `Expected \`run\` of tool "${tool.name}" to be a function`);
  }
  if (isTaken(tool.name)) {
    throw new ToolHostError('NAME_TAKEN', `A host tool named "${tool.name}" is already registered`);
  }
  const compiled = compileParameterSchema(tool.parameterSchema, schemaLimits);
  if (!compiled.ok) throw new ToolHostError('INVALID_OPTION', `Tool "${tool.name}": ${compiled.message}`);
  const rich = checkRichFields(
    {
      title: asRead(tool.title),
      annotations: asRead(tool.annotations),
      outputSchema: asRead(tool.outputSchema),
    },
    schemaLimits,
  );
  if (!rich.ok) throw new ToolHostError('INVALID_OPTION', `Tool "${tool.name}": ${rich.reason}`);
  const info: ToolInfo = {
    name: tool.name,
    description: tool.description,
    parameterSchema: tool.parameterSchema as JsonObject,
    timeoutMs: checkTimeoutMs(tool.timeoutMs),
    concurrency: tool.concurrency === 'exclusive' ? 'exclusive' : 'parallel',
  };
  if (rich.title !== undefined) info.title = rich.title;
  if (rich.annotations !== undefined) info.annotations = rich.annotations;
  if (rich.output !== undefined) info.outputSchema = rich.output.schema;
  return {
    info,
    validate: compiled.validate,
    validateOutput: rich.output?.validate,
    hasSelftest: typeof tool.selftest === 'function',
    origin: { kind: 'host', tool },
  };
}

/** A host tool's field as the declaration checks read one. */
function asRead(value: unknown): FieldRead {
  return value === undefined ? { state: 'missing' } : { state: 'value', value: value as never };
}
