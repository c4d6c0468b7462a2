/**
 * The host's tools as the SDK's own tool runner takes them: `client.beta.messages.toolRunner({ tools })`.
 * Calls still run in the host's sandbox; an error outcome surfaces as the SDK's `ToolError`, so the
 * model gets `is_error: true` with the outcome's content.
 */

import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import { anthropicTool } from './anthropic-tool.js';
import type { LoopHost, LoopHostCallOptions } from './loop-host.js';
import { sdkErrors } from './sdk.js';
import { toApiContent } from './tool-result-content.js';

/**
 * One `BetaRunnableTool` per tool the host offers now (a snapshot: call it again after loading more).
 * The SDK's runner knows nothing of `exclusive` tools or `maxConcurrency`; `runTools` does.
 * @example
 * const final = await client.beta.messages.toolRunner({
 *   model: 'claude-sonnet-5',
 *   max_tokens: 1024,
 *   messages: [{ role: 'user', content: 'Weather in Oslo?' }],
 *   tools: toRunnableTools(host),
 * });
 */
export function toRunnableTools(host: LoopHost): BetaRunnableTool<unknown>[] {
  return host.list().map((info) => ({
    ...anthropicTool(info),
    parse: (input: unknown) => input,
    run: async (input, context) => {
      const options: LoopHostCallOptions = {};
      if (context?.toolUse.id !== undefined) options.callId = context.toolUse.id;
      if (context?.signal) options.signal = context.signal;
      const outcome = await host.call(info.name, input, options);
      const api = toApiContent(outcome.content);
      if (!api.ok) throw new (await sdkErrors()).ToolError(api.message);
      if (outcome.isError) throw new (await sdkErrors()).ToolError(api.content);
      return api.content;
    },
  }));
}
