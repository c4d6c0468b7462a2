/**
 * One request of the loop: streamed when the caller listens to events, a plain `create` otherwise.
 * Every request turns the SDK's own retries off; the loop's retry layer ({@link withRetries}) is the
 * only one.
 */

import type {
  Message,
  MessageCreateParams,
  MessageCreateParamsNonStreaming,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages';
import { classifyApiFailure } from './api-failure.js';
import { LoopFault } from './loop-error.js';
import { isPlainObject, MessageAccumulator, type ReceivedTurn } from './message-accumulator.js';
import { sdkErrors } from './sdk.js';

/**
 * The client the loop drives: an SDK `Anthropic` client of any build or version (only
 * `messages.create` is used, with the request options `maxRetries` and `signal`). Typed by that one
 * method's shape rather than by toolhost's own SDK class, so a client of another SDK version fits
 * too; the body parameter is `never` because every version's body type must fit, whatever it adds.
 */
export interface MessagesClient {
  messages: {
    create(body: never, options?: { maxRetries?: number; signal?: AbortSignal }): PromiseLike<unknown>;
  };
}

/** What `create` does, as the loop calls it (the Messages API's shapes, from toolhost's SDK types). */
type Create = {
  (body: MessageCreateParamsNonStreaming, options: RequestOptions): PromiseLike<Message>;
  (
    body: MessageCreateParams & { stream: true },
    options: RequestOptions,
  ): PromiseLike<AsyncIterable<RawMessageStreamEvent>>;
};
type RequestOptions = { maxRetries: 0; signal?: AbortSignal };

function create(client: MessagesClient): Create {
  return client.messages.create.bind(client.messages) as unknown as Create;
}

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
  const message = await create(client)(params, requestOptions(signal));
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
  const { APIConnectionError, APIUserAbortError } = await sdkErrors();
  const stream = await create(client)({ ...params, stream: true }, requestOptions(signal));
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
    // An `error` event in the stream arrives as the client SDK's own error (of whichever SDK copy or
    // version the caller uses); anything else (the socket closed, a garbled chunk) means the stream
    // broke off and is retried like a dropped connection.
    if (error instanceof LoopFault || classifyApiFailure(error) !== undefined) throw error;
    throw new APIConnectionError({
      message: `the response stream broke off: ${error instanceof Error ? error.message : String(error)}`,
      ...(error instanceof Error ? { cause: error } : {}),
    });
  }
  // The SDK ends the iteration quietly when the request is aborted mid-stream.
  if (signal?.aborted === true) throw new APIUserAbortError();
  const turn = accumulator.finish();
  if (turn === undefined)
    throw new APIConnectionError({ message: 'the response stream ended before message_stop' });
  return turn;
}

function requestOptions(signal: AbortSignal | undefined): { maxRetries: 0; signal?: AbortSignal } {
  return signal === undefined ? { maxRetries: 0 } : { maxRetries: 0, signal };
}
