/**
 * One request of the loop: streamed when the caller listens to events, a plain `create` otherwise.
 * Every request turns the SDK's own retries off; the loop's retry layer ({@link withRetries}) is the
 * only one.
 */

import type Anthropic from '@anthropic-ai/sdk';
import { AnthropicError, APIConnectionError, APIUserAbortError } from '@anthropic-ai/sdk';
import type {
  MessageCreateParamsNonStreaming,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages';
import { LoopFault } from './loop-error.js';
import { isPlainObject, MessageAccumulator, type ReceivedTurn } from './message-accumulator.js';

/** The client the loop drives: the SDK's `Anthropic` (only `messages.create` is used). */
export type MessagesClient = Pick<Anthropic, 'messages'>;

export interface TurnRequest {
  client: MessagesClient;
  params: MessageCreateParamsNonStreaming;
  signal: AbortSignal | undefined;
  onEvent: ((event: RawMessageStreamEvent) => void) | undefined;
}

export function requestTurn(request: TurnRequest): Promise<ReceivedTurn> {
  return request.onEvent === undefined ? createTurn(request) : streamTurn(request, request.onEvent);
}

async function createTurn({ client, params, signal }: TurnRequest): Promise<ReceivedTurn> {
  const message = await client.messages.create(params, requestOptions(signal));
  // A non-streamed input that is not an object can't be run, nor replayed as it is.
  const invalidInputIds = new Set<string>();
  const content = message.content.map((block) => {
    if (block.type !== 'tool_use' || isPlainObject(block.input)) return block;
    invalidInputIds.add(block.id);
    return { ...block, input: {} };
  });
  return { message: { ...message, content }, invalidInputIds };
}

async function streamTurn(
  { client, params, signal }: TurnRequest,
  onEvent: (event: RawMessageStreamEvent) => void,
): Promise<ReceivedTurn> {
  const stream = await client.messages.create({ ...params, stream: true }, requestOptions(signal));
  const accumulator = new MessageAccumulator();
  try {
    for await (const event of stream) {
      try {
        onEvent(event);
      } catch (thrown) {
        throw new LoopFault('callback_error', 'onEvent', thrown);
      }
      accumulator.add(event);
    }
  } catch (error) {
    if (signal?.aborted === true) throw new APIUserAbortError();
    // An `error` event in the stream arrives as the SDK's APIError; anything else (the socket closed,
    // a garbled chunk) means the stream broke off and is retried like a dropped connection.
    if (error instanceof AnthropicError || error instanceof LoopFault) throw error;
    throw new APIConnectionError({
      message: `the response stream broke off: ${error instanceof Error ? error.message : String(error)}`,
      ...(error instanceof Error ? { cause: error } : {}),
    });
  }
  // The SDK ends the iteration quietly when the request is aborted mid-stream.
  if (signal?.aborted === true) throw new APIUserAbortError();
  return accumulator.finish();
}

function requestOptions(signal: AbortSignal | undefined): { maxRetries: 0; signal?: AbortSignal } {
  return signal === undefined ? { maxRetries: 0 } : { maxRetries: 0, signal };
}
