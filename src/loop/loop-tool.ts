/**
 * In-process loop tools: an API tool definition plus `run`. They are the
 * caller's own, trusted code and run in the caller's thread; the loop still bounds them with
 * `toolTimeoutMs` and turns a throw into an error result.
 */
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { describeThrown } from '../boundary/errors.js';
import { errorOutcome, type ToolOutcome } from '../boundary/outcome.js';
import type { ToolConcurrency, ToolContentBlock } from '../boundary/tool-contract.js';
import { isPlainObject } from './message-accumulator.js';

/** What a loop tool's `run` receives beside its input. */
export interface LoopToolContext {
  /** The `tool_use` id of this call. */
  readonly callId: string;
  /** Aborted when the loop is aborted or the call runs over `toolTimeoutMs`. */
  readonly signal: AbortSignal;
  /** Names of tools this loop does not offer. */
  readonly withheld: readonly string[];
}

/**
 * What a loop tool returns: text, content blocks, or either with `isError: true` for an error result.
 * Results built with `toolResult()` / `errorResult()` have this shape too. Any other value is sent as JSON.
 */
export type LoopToolResult =
  | string
  | ToolContentBlock[]
  | { content: string | ToolContentBlock[]; isError?: boolean | undefined };

/**
 * A tool the loop runs in-process: the Messages API tool definition plus `run`.
 * @example
 * const clock: LoopTool = {
 *   name: 'clock',
 *   description: 'The current time (ISO 8601)',
 *   input_schema: { type: 'object', properties: {} },
 *   run: () => new Date().toISOString(),
 * };
 */
export interface LoopTool extends Tool {
  /** Runs the call; may be async. A throw or rejection is an error result with its message. */
  run(input: Record<string, unknown>, context: LoopToolContext): LoopToolResult | Promise<LoopToolResult>;
  /**
   * `exclusive`: a turn that calls this tool runs all of its calls one at a time.
   * @default 'parallel'
   */
  concurrency?: ToolConcurrency;
}

export interface LoopToolCall {
  callId: string;
  input: Record<string, unknown>;
  withheld: readonly string[];
  signal: AbortSignal;
  /** No limit when undefined. */
  timeoutMs: number | undefined;
}

/**
 * Runs one call of a loop tool. At the timeout the call answers at once and its signal aborts; the
 * tool's own promise is left to settle on its own (its result is dropped).
 */
export async function runLoopTool(tool: LoopTool, call: LoopToolCall): Promise<ToolOutcome> {
  const deadline = new AbortController();
  const context: LoopToolContext = {
    callId: call.callId,
    signal: AbortSignal.any([call.signal, deadline.signal]),
    withheld: call.withheld,
  };
  const running = (async () => tool.run(call.input, context))().then(toOutcome, (thrown: unknown) =>
    errorOutcome('TOOL_THREW', describeThrown(thrown)),
  );
  const { timeoutMs } = call;
  if (timeoutMs === undefined) return running;

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<ToolOutcome>((resolve) => {
    timer = setTimeout(() => {
      const message = `tool timed out after ${timeoutMs} ms`;
      deadline.abort(new DOMException(message, 'TimeoutError'));
      resolve(errorOutcome('TOOL_TIMEOUT', message));
    }, timeoutMs);
  });
  try {
    return await Promise.race([running, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

function toOutcome(result: unknown): ToolOutcome {
  if (typeof result === 'string') return { content: textContent(result), isError: false };
  if (Array.isArray(result)) return { content: result as ToolContentBlock[], isError: false };
  if (isPlainObject(result) && Object.hasOwn(result, 'content')) {
    const { content, isError } = result;
    if (typeof content === 'string') return { content: textContent(content), isError: isError === true };
    if (Array.isArray(content)) return { content: content as ToolContentBlock[], isError: isError === true };
  }
  if (result === undefined || result === null) return { content: [], isError: false };
  try {
    return { content: textContent(JSON.stringify(result) ?? String(result)), isError: false };
  } catch (thrown) {
    return errorOutcome(
      'TOOL_BAD_RESULT',
      `the tool returned a value that can't be sent: ${describeThrown(thrown)}`,
    );
  }
}

/** An empty string is no content: the API rejects an empty text block. */
function textContent(text: string): ToolContentBlock[] {
  return text === '' ? [] : [{ type: 'text', text }];
}
