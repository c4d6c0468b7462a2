/**
 * The one conversion of an offered tool's checked declaration into the Messages API's tool shape.
 * Only what the API reads goes in: MCP's display fields stay out of the model's request.
 */
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import type { ToolInfo } from '../declaration/check.js';

export function anthropicTool(info: Pick<ToolInfo, 'name' | 'description' | 'parameterSchema'>): Tool {
  return {
    name: info.name,
    description: info.description,
    input_schema: { ...info.parameterSchema, type: 'object' },
  };
}
