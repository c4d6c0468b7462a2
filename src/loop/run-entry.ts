/**
 * The loop as the root export gives it: `runTools` loads the loop's modules on its first call, so
 * a program that imports toolhost only to host tools never loads them.
 */
import type { RunToolsOptions } from './loop-options.js';
import type { ToolLoopBody } from './request-body.js';
import type { ToolLoopResult } from './run-tools.js';
import type { MessagesClient } from './turn.js';

/**
 * Sends the request, runs every tool the model calls, answers all results of a turn in one user
 * message (in the calls' order), and repeats until `stop_reason` is neither `tool_use` nor
 * `pause_turn` (a `pause_turn` is sent again so the model can continue).
 *
 * A tool's failure (a throw, an error result, a timeout, an unknown name, input that is not JSON, a
 * blocked call) is an `is_error` result the model sees. Everything that ends the loop early throws a
 * {@link ToolLoopError} carrying the conversation; bad options throw a `ToolHostError` with code
 * `INVALID_OPTION` before anything is sent.
 *
 * @example
 * const { response, messages } = await runTools(
 *   client,
 *   { model: 'claude-sonnet-5', max_tokens: 2048, messages: [{ role: 'user', content: 'Weather in Oslo?' }] },
 *   { host, maxIterations: 6, toolTimeoutMs: 10_000 },
 * );
 * @example
 * const { response } = await runTools(client, 'Weather in Oslo?', { host, model: 'claude-sonnet-5' });
 */
export async function runTools(
  client: MessagesClient,
  bodyOrPrompt: ToolLoopBody | string,
  options: RunToolsOptions = {},
): Promise<ToolLoopResult> {
  const loop = await import('./run-tools.js');
  return loop.runTools(client, bodyOrPrompt, options);
}
