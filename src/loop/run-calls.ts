/**
 * Runs the tool calls of one assistant turn and answers each with a `tool_result`, in the calls' order.
 * Up to `maxConcurrency` calls run at once; a turn that calls any exclusive tool runs all of its calls
 * one at a time, in the model's order.
 */
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { errorOutcome, type ToolOutcome } from '../boundary/outcome.js';
import { mapLimit } from '../shared/limit.js';
import { LoopFault } from './loop-error.js';
import type { LoopHost } from './loop-host.js';
import { runLoopTool } from './loop-tool.js';
import { concurrencyOf, type RunnableTool, type ToolCatalogue } from './tool-catalogue.js';
import { toApiContent } from './tool-result-content.js';

/** A tool call as the gate sees it. */
export interface ToolCallRequest {
  /** The `tool_use` id. */
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The gate's answer: `true` or `{ allow: true }` runs the call; anything else blocks it. */
export type ToolCallDecision = boolean | { allow: true } | { allow: false; reason?: string };

/**
 * Decides, before each call runs, whether it may run. A blocked call runs nothing and answers the model
 * an error result with the reason.
 */
export type BeforeToolCall = (call: ToolCallRequest) => ToolCallDecision | Promise<ToolCallDecision>;

/** One `tool_use` block of the turn. */
export interface ToolCall extends ToolCallRequest {
  /** The input was not a JSON object (`eager_input_streaming`); the call must not run. */
  invalidInput: boolean;
}

export interface TurnSettings {
  catalogue: ToolCatalogue;
  host: LoopHost | undefined;
  withheld: readonly string[];
  maxConcurrency: number;
  toolTimeoutMs: number | undefined;
  beforeToolCall: BeforeToolCall | undefined;
  signal: AbortSignal | undefined;
}

export const INVALID_INPUT_JSON_MESSAGE = 'the tool input is not valid JSON';

export async function runCalls(
  calls: readonly ToolCall[],
  settings: TurnSettings,
): Promise<ToolResultBlockParam[]> {
  const exclusive = calls.some((call) => {
    const entry = settings.catalogue.runnable.get(call.name);
    return entry !== undefined && concurrencyOf(entry) === 'exclusive';
  });
  // Ends the calls still running when one of them fails the loop (a throwing gate, a failing host).
  const stop = new AbortController();
  const signal =
    settings.signal === undefined ? stop.signal : AbortSignal.any([settings.signal, stop.signal]);
  const running = mapLimit(
    calls,
    exclusive ? 1 : settings.maxConcurrency,
    async (call) => toolResult(call.id, await runCall(call, { ...settings, signal })),
    signal,
  );
  try {
    return await untilAborted(running, settings.signal);
  } catch (error) {
    stop.abort(error);
    throw error;
  }
}

async function runCall(
  call: ToolCall,
  settings: TurnSettings & { signal: AbortSignal },
): Promise<ToolOutcome> {
  if (call.invalidInput) return errorOutcome('INVALID_INPUT_JSON', INVALID_INPUT_JSON_MESSAGE);
  const entry = settings.catalogue.runnable.get(call.name);
  if (entry === undefined)
    return errorOutcome('UNKNOWN_TOOL', unknownToolMessage(call.name, settings.catalogue));

  const blocked = await gate(call, settings.beforeToolCall);
  if (blocked !== undefined) return errorOutcome('CALL_BLOCKED', blocked);
  return runTool(entry, call, settings);
}

function runTool(
  entry: RunnableTool,
  call: ToolCall,
  settings: TurnSettings & { signal: AbortSignal },
): Promise<ToolOutcome> {
  const { withheld, signal, toolTimeoutMs } = settings;
  if (entry.source === 'loop') {
    return runLoopTool(entry.tool, {
      callId: call.id,
      input: call.input,
      withheld,
      signal,
      timeoutMs: toolTimeoutMs,
    });
  }
  const host = settings.host;
  if (host === undefined) throw new Error('a host tool without a host');
  const options = toolTimeoutMs === undefined ? {} : { timeoutMs: toolTimeoutMs };
  return host
    .call(call.name, call.input, { callId: call.id, withheld, signal, ...options })
    .catch((thrown) => {
      throw new LoopFault('tool_host_error', `host.call(${JSON.stringify(call.name)})`, thrown);
    });
}

/** The reason a call is blocked, or `undefined` when it may run. */
async function gate(call: ToolCall, beforeToolCall: BeforeToolCall | undefined): Promise<string | undefined> {
  if (beforeToolCall === undefined) return undefined;
  let decision: ToolCallDecision;
  try {
    decision = await beforeToolCall({ id: call.id, name: call.name, input: call.input });
  } catch (thrown) {
    throw new LoopFault('callback_error', 'beforeToolCall', thrown);
  }
  if (decision === true || (typeof decision === 'object' && decision !== null && decision.allow === true)) {
    return undefined;
  }
  const reason =
    typeof decision === 'object' && decision !== null && !decision.allow ? decision.reason : undefined;
  return typeof reason === 'string' && reason !== ''
    ? reason
    : `the call to ${JSON.stringify(call.name)} was blocked`;
}

function unknownToolMessage(name: string, catalogue: ToolCatalogue): string {
  // Worded as the host words it, so the model reads one message whichever side answered.
  const available = [...catalogue.runnable.keys()];
  return `unknown tool ${JSON.stringify(name)}; available tools: ${available.length === 0 ? '(none)' : available.join(', ')}`;
}

/**
 * An outcome as the model gets it: content as the API takes it (none when empty; stand-ins for
 * blocks it has no place for), `is_error` only when set. A result the API would refuse is an error.
 */
function toolResult(toolUseId: string, outcome: ToolOutcome): ToolResultBlockParam {
  const api = toApiContent(outcome.content);
  if (!api.ok) {
    return {
      type: 'tool_result',
      tool_use_id: toolUseId,
      content: [{ type: 'text', text: api.message }],
      is_error: true,
    };
  }
  return {
    type: 'tool_result',
    tool_use_id: toolUseId,
    ...(api.content.length > 0 ? { content: api.content } : {}),
    ...(outcome.isError ? { is_error: true } : {}),
  };
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (without waiting for `promise`). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) {
      onAbort();
    } else {
      signal.addEventListener('abort', onAbort, { once: true });
    }
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
