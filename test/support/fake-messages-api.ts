/**
 * A local fake of the Anthropic Messages API (node:http on 127.0.0.1, a random port) for the real
 * `@anthropic-ai/sdk` client. Each test scripts the replies, in order; the server records every request
 * body it receives. A scripted message is sent as JSON, or as an SSE stream when the request asks for
 * `stream: true`, so one script serves both modes.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, beforeEach, expect } from 'vitest';
import { type LoopTool, type ToolLoopBody, ToolLoopError } from '../../dist/src/index.js';

/** A content block of a scripted reply. */
export type FakeBlock =
  | { type: 'text'; text: string }
  /** Streamed as `input_json_delta` chunks of `JSON.stringify(input)`. */
  | { type: 'tool_use' | 'server_tool_use'; id: string; name: string; input: unknown }
  /**
   * Streamed verbatim as `input_json_delta` chunks, valid JSON or not (what `eager_input_streaming` can
   * produce). In a JSON reply the input is the parsed value, or the raw text when it doesn't parse.
   */
  | { type: 'tool_use'; id: string; name: string; inputJson: string }
  /** Any other block (a server tool's result, …): sent whole in `content_block_start`. */
  | { type: 'other'; block: { type: string; [key: string]: unknown } };

export interface FakeMessage {
  content: FakeBlock[];
  stop_reason: string;
}

/** A scripted assistant message. */
export interface MessageReply {
  kind: 'message';
  message: FakeMessage;
  /** Streams only: break the stream off after this many events, by dropping or with an `error` event. */
  breakAfter?: { events: number; with: 'drop' | { type: string; message: string } };
}

/** What the API does with the next request. */
export type FakeReply =
  | MessageReply
  | { kind: 'error'; status: number; type: string; message: string; headers: Record<string, string> }
  | { kind: 'events'; events: Array<{ type: string; [key: string]: unknown }> }
  | { kind: 'drop' }
  | { kind: 'hang' };

/** A request body as received (parsed JSON). */
export interface RecordedBody {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  tools?: Array<{ name?: string; [key: string]: unknown }>;
  stream?: boolean;
  [key: string]: unknown;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: RecordedBody;
}

let nextToolUseId = 0;

export function text(value: string): FakeBlock {
  return { type: 'text', text: value };
}

/** A `tool_use` block; the id is generated unless given. */
export function toolUse(
  name: string,
  input: unknown,
  id = `toolu_${String(++nextToolUseId).padStart(4, '0')}`,
): FakeBlock {
  return { type: 'tool_use', id, name, input };
}

/** A `tool_use` block whose input is this raw text (see {@link FakeBlock}). */
export function rawToolUse(
  name: string,
  inputJson: string,
  id = `toolu_${String(++nextToolUseId).padStart(4, '0')}`,
): FakeBlock {
  return { type: 'tool_use', id, name, inputJson };
}

/** An assistant message; `stop_reason` defaults to `tool_use` when it calls tools, else `end_turn`. */
export function reply(content: FakeBlock[], stopReason?: string): MessageReply {
  const callsTools = content.some((block) => block.type === 'tool_use');
  return {
    kind: 'message',
    message: { content, stop_reason: stopReason ?? (callsTools ? 'tool_use' : 'end_turn') },
  };
}

/** An error response with the API's error body. */
export function apiError(
  status: number,
  type: string,
  options: { message?: string; headers?: Record<string, string> } = {},
): FakeReply {
  return {
    kind: 'error',
    status,
    type,
    message: options.message ?? `fake ${type}`,
    headers: options.headers ?? {},
  };
}

export function overloaded(headers: Record<string, string> = {}): FakeReply {
  return apiError(529, 'overloaded_error', { message: 'Overloaded', headers });
}

/** Closes the connection without answering. */
export function dropConnection(): FakeReply {
  return { kind: 'drop' };
}

/** Never answers (until the client goes away). */
export function hang(): FakeReply {
  return { kind: 'hang' };
}

export class FakeMessagesApi {
  readonly requests: RecordedRequest[] = [];
  readonly #replies: FakeReply[] = [];
  readonly #waiters: Array<{ count: number; resolve: () => void }> = [];
  readonly #server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as RecordedBody;
      this.requests.push({ path: request.url ?? '', headers: request.headers, body });
      const scripted = this.#replies.shift();
      this.#answer(scripted, body, response);
      this.#wakeWaiters();
    });
  });
  #baseURL = '';
  #messageCount = 0;

  static async start(): Promise<FakeMessagesApi> {
    const api = new FakeMessagesApi();
    await new Promise<void>((resolve) => api.#server.listen(0, '127.0.0.1', resolve));
    const { port } = api.#server.address() as AddressInfo;
    api.#baseURL = `http://127.0.0.1:${port}`;
    return api;
  }

  /** The `baseURL` for `new Anthropic({ apiKey: 'test', baseURL })`. */
  get baseURL(): string {
    return this.#baseURL;
  }

  /** Queues replies for the next requests, in order. */
  script(...replies: FakeReply[]): void {
    this.#replies.push(...replies);
  }

  /** The body of request `index` (from 0). */
  body(index: number): RecordedBody {
    const recorded = this.requests[index];
    if (recorded === undefined) throw new Error(`no request #${index} (got ${this.requests.length})`);
    return recorded.body;
  }

  /** Resolves once `count` requests have arrived (a handshake, not a sleep). */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #wakeWaiters(): void {
    for (const waiter of [...this.#waiters]) {
      if (this.requests.length >= waiter.count) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  #answer(scripted: FakeReply | undefined, body: RecordedBody, response: ServerResponse): void {
    if (scripted === undefined) {
      const message = `fake Messages API: no reply scripted for request #${this.requests.length - 1}`;
      sendError(response, 400, 'invalid_request_error', message, {});
      return;
    }
    switch (scripted.kind) {
      case 'error':
        sendError(response, scripted.status, scripted.type, scripted.message, scripted.headers);
        return;
      case 'drop':
        response.socket?.destroy();
        return;
      case 'hang':
        // Nothing is sent; the client's abort (or close()) ends the request.
        return;
      case 'events':
        sendEvents(response, scripted.events);
        return;
      case 'message': {
        const message = this.#fullMessage(scripted.message, body.model);
        if (body.stream === true) {
          sendEvents(response, streamEvents(message, scripted.message), scripted.breakAfter);
        } else {
          response.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake' });
          response.end(JSON.stringify(message));
        }
        return;
      }
    }
  }

  #fullMessage(message: FakeMessage, model: string): Record<string, unknown> {
    return {
      id: `msg_fake_${++this.#messageCount}`,
      type: 'message',
      role: 'assistant',
      model,
      content: message.content.map(jsonBlock),
      stop_reason: message.stop_reason,
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 20,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
      },
    };
  }
}

function jsonBlock(block: FakeBlock): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text, citations: null };
    case 'other':
      return block.block;
    default: {
      const input = 'inputJson' in block ? parseOr(block.inputJson) : block.input;
      return { type: block.type, id: block.id, name: block.name, input };
    }
  }
}

function parseOr(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/** The SSE events the API sends for a message. */
export function streamEvents(
  message: Record<string, unknown>,
  described: FakeMessage,
): Array<{ type: string; [key: string]: unknown }> {
  const events: Array<{ type: string; [key: string]: unknown }> = [
    {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    },
  ];
  described.content.forEach((block, index) => {
    switch (block.type) {
      case 'text':
        events.push({
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '', citations: null },
        });
        for (const part of halves(block.text)) {
          events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: part } });
        }
        break;
      case 'other':
        events.push({ type: 'content_block_start', index, content_block: block.block });
        break;
      default: {
        const json = 'inputJson' in block ? block.inputJson : JSON.stringify(block.input);
        events.push({
          type: 'content_block_start',
          index,
          content_block: { type: block.type, id: block.id, name: block.name, input: {} },
        });
        for (const part of halves(json)) {
          events.push({
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: part },
          });
        }
      }
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: described.stop_reason, stop_sequence: null, container: null, stop_details: null },
      usage: {
        output_tokens: 20,
        input_tokens: null,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
      },
    },
    { type: 'message_stop' },
  );
  return events;
}

/** Two chunks, so every block really is assembled from deltas. */
/** The input split in two deltas; an empty input is one empty delta, as the API streams a call without arguments. */
function halves(value: string): string[] {
  if (value.length < 2) return [value];
  const middle = Math.floor(value.length / 2);
  return [value.slice(0, middle), value.slice(middle)];
}

function sendEvents(
  response: ServerResponse,
  events: Array<{ type: string; [key: string]: unknown }>,
  breakAfter?: { events: number; with: 'drop' | { type: string; message: string } },
): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': 'req_fake',
  });
  const sent = breakAfter === undefined ? events : events.slice(0, breakAfter.events);
  for (const event of sent) response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  if (breakAfter === undefined) {
    response.end();
  } else if (breakAfter.with === 'drop') {
    // Let the events already written reach the client before the connection goes.
    response.write('', () => response.socket?.destroy());
  } else {
    const error = { type: 'error', error: breakAfter.with };
    response.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
  }
}

function sendError(
  response: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string>,
): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    'request-id': 'req_fake_error',
    ...headers,
  });
  response.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

// ---- Helpers shared by the loop suites ----

export interface LoopTestContext {
  api: FakeMessagesApi;
  client: Anthropic;
}

/** Starts a fresh fake API, and the real SDK client pointed at it, before each test; closes it after. */
export function useFakeApi(): LoopTestContext {
  const context = {} as LoopTestContext;
  beforeEach(async () => {
    context.api = await FakeMessagesApi.start();
    context.client = new Anthropic({ apiKey: 'test', baseURL: context.api.baseURL });
  });
  afterEach(async () => {
    await context.api.close();
  });
  return context;
}

/** A body-form request with one user message. */
export function body(content = 'hello', extra: Partial<ToolLoopBody> = {}): ToolLoopBody {
  return { model: 'claude-test', max_tokens: 256, messages: [{ role: 'user', content }], ...extra };
}

/** Retries without real waits, so retry tests stay fast. */
export const fastRetry = { minTimeoutMs: 1, maxTimeoutMs: 5_000 };

/** A loop tool from a name and a run function, with an open schema. */
export function loopTool(name: string, run: LoopTool['run'], extra: Partial<LoopTool> = {}): LoopTool {
  return {
    name,
    description: `the ${name} tool`,
    input_schema: { type: 'object', properties: {} },
    run,
    ...extra,
  };
}

/** A promise with its resolve function outside, for handshakes between a test and its tools. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** The ToolLoopError a loop rejects with (fails the test when it resolves or throws anything else). */
export async function loopError(promise: Promise<unknown>): Promise<ToolLoopError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ToolLoopError);
  return error as ToolLoopError;
}
