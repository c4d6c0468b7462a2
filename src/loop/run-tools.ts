/**
 * `runTools`: the Messages API tool-use loop over sandboxed host
 * tools, in-process loop tools and the API's server tools.
 */
import type { Message, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { ToolLoopError, toLoopError } from './loop-error.js';
import { checkOptions, type LoopSettings, type RunToolsOptions } from './loop-options.js';
import { isPlainObject, type ReceivedTurn } from './message-accumulator.js';
import { checkUniqueNames, resolveBody, type ToolLoopBody } from './request-body.js';
import { withRetries } from './retry.js';
import { runCalls, type ToolCall, type TurnSettings } from './run-calls.js';
import { buildCatalogue, type ToolCatalogue } from './tool-catalogue.js';
import { type MessagesClient, requestTurn } from './turn.js';

/** What a finished loop returns. */
export interface ToolLoopResult {
  /** The final assistant message: its `stop_reason` is neither `tool_use` nor `pause_turn`. */
  response: Message;
  /** The whole conversation, ending with the final assistant turn. Append a user message to go on. */
  messages: MessageParam[];
}

/** The tool-use loop itself: see {@link import('./run-entry.js').runTools}, which loads this on its first call. */
export async function runTools(
  client: MessagesClient,
  bodyOrPrompt: ToolLoopBody | string,
  options: RunToolsOptions = {},
): Promise<ToolLoopResult> {
  const settings = checkOptions(options);
  const { params, messages, bodyTools } = resolveBody(bodyOrPrompt, options);
  checkUniqueNames([...bodyTools, ...settings.tools]);
  const withheld = new Set(settings.withheld);
  const { signal } = settings;

  try {
    for (let iteration = 1; ; iteration++) {
      signal?.throwIfAborted();
      const catalogue = buildCatalogue({
        bodyTools,
        loopTools: settings.tools,
        host: settings.host,
        withheld,
      });
      const request = {
        ...params,
        messages: [...messages],
        ...(catalogue.definitions.length > 0 ? { tools: catalogue.definitions } : {}),
      };
      const turn = await withRetries(
        () => requestTurn({ client, params: request, signal, onEvent: settings.onEvent }),
        settings.retry,
        signal,
      );
      signal?.throwIfAborted();
      const response = turn.message;
      messages.push({ role: 'assistant', content: response.content });

      if (response.stop_reason !== 'tool_use' && response.stop_reason !== 'pause_turn') {
        return { response, messages };
      }
      if (iteration === settings.maxIterations) {
        throw new ToolLoopError(
          'max_iterations',
          `the model still wanted to go on after ${settings.maxIterations} requests (maxIterations)`,
          { messages: [...messages] },
        );
      }
      if (response.stop_reason === 'pause_turn') continue;

      const calls = toolCalls(turn);
      // `tool_use` with nothing to answer leaves nothing to send: the turn is as final as it gets.
      if (calls.length === 0) return { response, messages };
      const results = await runCalls(calls, turnSettings(settings, catalogue));
      signal?.throwIfAborted();
      messages.push({ role: 'user', content: results });
    }
  } catch (error) {
    throw toLoopError(error, [...messages], signal);
  }
}

function turnSettings(settings: LoopSettings, catalogue: ToolCatalogue): TurnSettings {
  return {
    catalogue,
    host: settings.host,
    withheld: settings.withheld,
    maxConcurrency: settings.maxConcurrency,
    toolTimeoutMs: settings.toolTimeoutMs,
    beforeToolCall: settings.beforeToolCall,
    signal: settings.signal,
  };
}

function toolCalls({ message, invalidInputIds }: ReceivedTurn): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_use') continue;
    const input = isPlainObject(block.input) ? block.input : undefined;
    calls.push({
      id: block.id,
      name: block.name,
      input: input ?? {},
      invalidInput: input === undefined || invalidInputIds.has(block.id),
    });
  }
  return calls;
}
