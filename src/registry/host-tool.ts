/**
 * The host's own tools (trusted, in-process): checked when they are registered, with one clear
 * error per mistake.
 */

import { ToolHostError } from '../boundary/errors.js';
import { checkTimeoutMs, TOOL_NAME_PATTERN } from '../declaration/check.js';
import { compileParameterSchema, type SchemaLimits } from '../schema/json-schema.js';
import type { JsonObject } from '../tool-module.js';
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
  return {
    info: {
      name: tool.name,
      description: tool.description,
      parameterSchema: tool.parameterSchema as JsonObject,
      timeoutMs: checkTimeoutMs(tool.timeoutMs),
      concurrency: tool.concurrency === 'exclusive' ? 'exclusive' : 'parallel',
    },
    validate: compiled.validate,
    hasSelftest: typeof tool.selftest === 'function',
    origin: { kind: 'host', tool },
  };
}
