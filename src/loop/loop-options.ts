/**
 * The options of `runTools`, checked up front with exact messages in p-retry's style, so a mistake
 * throws before any request is sent.
 */
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { ToolHostError } from '../boundary/errors.js';
import { expectNonNegativeInteger, expectPositiveInteger, show } from '../shared/expect.js';
import type { LoopHost } from './loop-host.js';
import type { LoopTool } from './loop-tool.js';
import {
  DEFAULT_RETRIES,
  DEFAULT_RETRY_MAX_TIMEOUT_MS,
  DEFAULT_RETRY_MIN_TIMEOUT_MS,
  type RetryOptions,
  type RetrySettings,
} from './retry.js';
import type { BeforeToolCall } from './run-calls.js';

/** Options of {@link runTools}. Every one is optional. */
export interface RunToolsOptions {
  /** The tool host whose offered tools the loop offers and runs (in its sandbox). */
  host?: LoopHost;
  /** In-process loop tools: API tool definitions with `run`. They win over host tools of the same name. */
  tools?: readonly LoopTool[];
  /**
   * The most requests one call of `runTools` sends. Reaching it throws `ToolLoopError` `max_iterations`.
   * @default 10
   */
  maxIterations?: number;
  /**
   * The most tool calls of one turn that run at once. A turn with any exclusive tool runs one at a time.
   * @default 4
   */
  maxConcurrency?: number;
  /**
   * Caps each call, in milliseconds; a call over it answers `"tool timed out after N ms"`. Host tools
   * keep their own (shorter) timeouts; loop tools have no limit without this.
   * @default undefined (no cap)
   */
  toolTimeoutMs?: number;
  /**
   * Streams every turn and receives every raw event of every turn, in order; each turn starts with its
   * own `message_start`. A retried request streams again from its `message_start`. Without it the loop
   * sends plain (non-streaming) requests.
   */
  onEvent?: (event: RawMessageStreamEvent) => void;
  /** Aborts the loop, its in-flight request, its retry waits and its running tools. */
  signal?: AbortSignal;
  /** Tool names that are neither offered nor run (tools see them as `ctx.withheld`). @default [] */
  withheld?: readonly string[];
  /** A gate called before each call runs; a blocked call answers an error result with the reason. */
  beforeToolCall?: BeforeToolCall;
  /** How transient API failures are retried. */
  retry?: RetryOptions;
  /** Prompt form only: the model. @default process.env.ANTHROPIC_MODEL */
  model?: string;
  /** Prompt form only: `max_tokens` of every request. @default 4096 */
  maxTokens?: number;
  /** Prompt form only: the system prompt. */
  system?: string;
}

export const DEFAULT_MAX_ITERATIONS = 10;
export const DEFAULT_MAX_CONCURRENCY = 4;

export interface LoopSettings {
  host: LoopHost | undefined;
  tools: readonly LoopTool[];
  maxIterations: number;
  maxConcurrency: number;
  toolTimeoutMs: number | undefined;
  onEvent: ((event: RawMessageStreamEvent) => void) | undefined;
  signal: AbortSignal | undefined;
  withheld: readonly string[];
  beforeToolCall: BeforeToolCall | undefined;
  retry: RetrySettings;
}

export function checkOptions(options: RunToolsOptions): LoopSettings {
  if (typeof options !== 'object' || options === null)
    invalid(`Expected \`options\` to be an object, got ${show(options)}`);
  expectPositiveInteger('maxIterations', options.maxIterations);
  expectPositiveInteger('maxConcurrency', options.maxConcurrency);
  expectPositiveInteger('toolTimeoutMs', options.toolTimeoutMs);
  expectFunction('onEvent', options.onEvent);
  expectFunction('beforeToolCall', options.beforeToolCall);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    invalid(`Expected \`signal\` to be an AbortSignal, got ${show(options.signal)}`);
  }
  const withheld = options.withheld ?? [];
  if (!Array.isArray(withheld) || !withheld.every((name) => typeof name === 'string')) {
    invalid(`Expected \`withheld\` to be an array of strings, got ${show(options.withheld)}`);
  }
  const host = options.host;
  if (host !== undefined && (typeof host?.list !== 'function' || typeof host?.call !== 'function')) {
    invalid(`Expected \`host\` to have list() and call() methods, got ${show(host)}`);
  }
  const tools = options.tools ?? [];
  if (!Array.isArray(tools)) invalid(`Expected \`tools\` to be an array, got ${show(tools)}`);
  for (const [index, tool] of tools.entries()) checkLoopTool(tool, `tools[${index}]`);

  return {
    host,
    tools,
    maxIterations: options.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    maxConcurrency: options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY,
    toolTimeoutMs: options.toolTimeoutMs,
    onEvent: options.onEvent,
    signal: options.signal,
    withheld,
    beforeToolCall: options.beforeToolCall,
    retry: checkRetry(options.retry),
  };
}

function checkRetry(retry: RetryOptions | undefined): RetrySettings {
  if (retry !== undefined && (typeof retry !== 'object' || retry === null)) {
    invalid(`Expected \`retry\` to be an object, got ${show(retry)}`);
  }
  expectNonNegativeInteger('retry.retries', retry?.retries);
  expectNonNegativeInteger('retry.minTimeoutMs', retry?.minTimeoutMs);
  expectNonNegativeInteger('retry.maxTimeoutMs', retry?.maxTimeoutMs);
  expectFunction('retry.onRetry', retry?.onRetry);
  const minTimeoutMs = retry?.minTimeoutMs ?? DEFAULT_RETRY_MIN_TIMEOUT_MS;
  const maxTimeoutMs = retry?.maxTimeoutMs ?? Math.max(DEFAULT_RETRY_MAX_TIMEOUT_MS, minTimeoutMs);
  if (maxTimeoutMs < minTimeoutMs) {
    invalid(
      `Expected \`retry.maxTimeoutMs\` to be at least \`retry.minTimeoutMs\` (${minTimeoutMs}), got ${maxTimeoutMs}`,
    );
  }
  return { retries: retry?.retries ?? DEFAULT_RETRIES, minTimeoutMs, maxTimeoutMs, onRetry: retry?.onRetry };
}

/** A loop tool: a `name` the API accepts and a `run` function. */
export function checkLoopTool(tool: unknown, label: string): asserts tool is LoopTool {
  if (typeof tool !== 'object' || tool === null)
    invalid(`Expected \`${label}\` to be a tool object, got ${show(tool)}`);
  const { name, run } = tool as { name?: unknown; run?: unknown };
  if (typeof name !== 'string' || name === '')
    invalid(`Expected \`${label}.name\` to be a non-empty string, got ${show(name)}`);
  if (typeof run !== 'function') invalid(`Expected \`${label}.run\` to be a function, got ${show(run)}`);
}

function expectFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    invalid(`Expected \`${name}\` to be a function, got ${show(value)}`);
  }
}

export function invalid(message: string): never {
  throw new ToolHostError('INVALID_OPTION', message);
}
