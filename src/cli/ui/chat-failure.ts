/**
 * How `toolhost chat` words a conversation that failed: an API error once and plainly
 * (`authentication failed (401): invalid x-api-key`, not the loop's message wrapped around the SDK's
 * wrapped around the API's body), anything else as the loop's own sentence. A message with line
 * breaks keeps them: its first line is the message, the rest follow indented.
 */
import { APIError } from '@anthropic-ai/sdk';
import type { ToolLoopError } from '../../loop/loop-error.js';
import { messages } from './messages.js';

/** What each API error type means, in words (the status follows in brackets). */
const API_ERROR_WORDS: Readonly<Record<string, string>> = {
  authentication_error: 'authentication failed',
  permission_error: 'permission denied',
  billing_error: 'the account could not be billed',
  not_found_error: 'not found',
  invalid_request_error: 'invalid request',
  request_too_large: 'the request is too large',
  rate_limit_error: 'rate limited',
  overloaded_error: 'the API is overloaded',
  api_error: 'the API failed',
  timeout_error: 'the API timed out',
};

/** The lines to show: the first is the message (without `toolhost: `), the rest its continuation. */
export function chatFailureLines(error: ToolLoopError): string[] {
  const cause = error.cause;
  if (cause instanceof APIError && typeof cause.status === 'number') {
    const what = Object.hasOwn(API_ERROR_WORDS, error.type)
      ? (API_ERROR_WORDS[error.type] as string)
      : `the Messages API answered ${error.type}`;
    return splitLines(messages.apiFailed(what, cause.status, apiMessage(cause)));
  }
  return splitLines(messages.chatFailed(error.type, error.message));
}

/** The API's own message; the SDK's message (`401 {...}`) only when the body had none. */
function apiMessage(error: APIError): string {
  if (typeof error.apiMessage === 'string' && error.apiMessage !== '') return error.apiMessage;
  return error.message.replace(/^\d{3}\s+/, '');
}

function splitLines(text: string): string[] {
  const [first = '', ...rest] = text.replace(/\n+$/, '').split('\n');
  return [first, ...rest.map((line) => `  ${line}`)];
}
