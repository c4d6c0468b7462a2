/**
 * Which offered tool a call names, and whether its input fits that tool's `parameterSchema`: a
 * call that fails either never runs, and the model gets the reason as an error outcome.
 */
import { errorOutcome, type ToolOutcome } from '../boundary/outcome.js';
import type { OfferedTool } from '../registry/generation.js';
import { validateInput } from '../schema/json-schema.js';

/** The tool `name` stands for in `tools` with `args` checked, or the outcome that refuses the call. */
export function callTarget(
  tools: ReadonlyMap<string, OfferedTool>,
  name: unknown,
  args: unknown,
): { tool: OfferedTool } | { refused: ToolOutcome } {
  const tool = typeof name === 'string' ? tools.get(name) : undefined;
  if (tool === undefined) {
    const names = [...tools.keys()];
    return {
      refused: errorOutcome(
        'UNKNOWN_TOOL',
        `unknown tool ${JSON.stringify(String(name))}; available tools: ${names.length === 0 ? '(none)' : names.join(', ')}`,
      ),
    };
  }
  const check = validateInput(tool.validate, args);
  if (!check.valid) {
    return {
      refused: errorOutcome(
        'INVALID_INPUT',
        `the input does not match the tool's parameterSchema:\n${check.errors.map((line) => `- ${line}`).join('\n')}`,
      ),
    };
  }
  return { tool };
}
