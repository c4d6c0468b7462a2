/**
 * How the loop fails: one {@link ToolLoopError} that always carries the conversation, so a caller can
 * resend it. A tool's fault never ends the loop (it is an `is_error` result the model sees); only the
 * API, the network, an abort, the iteration cap, a throwing callback or a failing host do.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ErrorType } from '@anthropic-ai/sdk/resources/shared';
import { ToolHostError } from '../boundary/errors.js';
import { classifyApiFailure } from './api-failure.js';

/**
 * Why the loop stopped without a final answer:
 * - `max_iterations`: `maxIterations` requests were sent and the model still wants tools.
 * - `aborted`: the caller's `signal` aborted the loop.
 * - `connection_error`: the API could not be reached, or a response stream broke off (after retries).
 * - `callback_error`: `onEvent`, `beforeToolCall` or `retry.onRetry` threw (the error is the `cause`).
 * - `tool_host_error`: the host itself failed (`host.list()` threw or `host.call()` rejected).
 * - `client_error`: the client threw before it got an answer (for example, no API key).
 * - any API error type, such as `overloaded_error`, `rate_limit_error` or `invalid_request_error`.
 */
export type ToolLoopErrorType =
  | 'max_iterations'
  | 'aborted'
  | 'connection_error'
  | 'callback_error'
  | 'tool_host_error'
  | 'client_error'
  | ErrorType;

/**
 * The only error `runTools` throws once its options are accepted.
 *
 * `messages` is the conversation so far. After a failed request it is exactly the conversation that
 * request sent, so passing it back as the body's `messages` sends that request again. After
 * `max_iterations` it ends with the last assistant turn (whose tool calls did not run).
 *
 * @example
 * try {
 *   return await runTools(client, body, { host });
 * } catch (error) {
 *   if (error instanceof ToolLoopError && error.type === 'overloaded_error') {
 *     return await runTools(client, { ...body, messages: error.messages }, { host });
 *   }
 *   throw error;
 * }
 */
export class ToolLoopError extends ToolHostError {
  override name = 'ToolLoopError';
  readonly type: ToolLoopErrorType;
  readonly messages: MessageParam[];

  constructor(
    type: ToolLoopErrorType,
    message: string,
    options: { messages: MessageParam[]; cause?: unknown },
  ) {
    super('TOOL_LOOP_FAILED', message, options.cause === undefined ? undefined : { cause: options.cause });
    this.type = type;
    this.messages = options.messages;
  }
}

/**
 * A failure of something the caller handed to the loop (a callback or the host), raised inside the loop
 * and turned into a {@link ToolLoopError} where the conversation is known. Never retried.
 */
export class LoopFault extends Error {
  override name = 'LoopFault';
  readonly type: 'callback_error' | 'tool_host_error';

  constructor(type: 'callback_error' | 'tool_host_error', what: string, cause: unknown) {
    super(`${what} threw: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.type = type;
  }
}

/** Any failure inside the loop, as the one error the caller sees. */
export function toLoopError(
  error: unknown,
  messages: MessageParam[],
  signal: AbortSignal | undefined,
): ToolLoopError {
  if (error instanceof ToolLoopError) return error;
  // Errors of the caller's client are read by what they carry: its SDK may be another copy or
  // version than toolhost's own (see api-failure.ts).
  const failure = error instanceof LoopFault ? undefined : classifyApiFailure(error);
  if (signal?.aborted === true || failure?.kind === 'aborted') {
    return new ToolLoopError('aborted', 'the tool loop was aborted', {
      messages,
      cause: signal?.reason ?? error,
    });
  }
  if (error instanceof LoopFault) {
    return new ToolLoopError(error.type, error.message, { messages, cause: error.cause });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (failure?.kind === 'connection') {
    return new ToolLoopError('connection_error', `the Messages API could not be reached: ${message}`, {
      messages,
      cause: error,
    });
  }
  if (failure?.kind === 'api') {
    const type = apiErrorType(failure.type, failure.status);
    return new ToolLoopError(type, `the Messages API answered ${type}: ${message}`, {
      messages,
      cause: error,
    });
  }
  return new ToolLoopError('client_error', `the request could not be made: ${message}`, {
    messages,
    cause: error,
  });
}

/** The API's own error type, or the one its status stands for when the body had none. */
function apiErrorType(type: string | null, status: number | undefined): ErrorType {
  // The API's own word, even one this SDK version's type doesn't list yet.
  if (type !== null) return type as ErrorType;
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}
