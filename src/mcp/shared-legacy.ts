/**
 * The common 2025-era request over stateless HTTP, answered cheaply: one MCP server, made once and
 * kept, answers every request that will send nothing before its answer (no progress token, no log
 * messages asked for), and its answer is written as plain JSON straight to the HTTP response.
 *
 * A new server and transport per request (legacy-http.ts, the SDK's stateless idiom) cost more than
 * the rest of the request: the server's construction, the web `Request`/`Response` around it, and
 * its close, which rejects with an `SdkError` (a stack captured) after every answer. The answers
 * are the same: a stateless server never sees an `initialize` (that one still goes to a server of
 * its own), so one kept server knows no more of a client than a new one would.
 *
 * Only what the per-request path would serve passes here (the SDK transport's own checks: both
 * media types accepted, a JSON body, a protocol version it supports, one valid JSON-RPC request);
 * anything else goes there and gets that path's answer, errors included. Clients number their
 * requests from the same start, so every request gets an id of its own on the server, and its
 * client's id back on the answer. A client that goes away before its answer cancels its call, as
 * closing its own server did.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isJsonContentType,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type McpServerFactory,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from '@modelcontextprotocol/server';
import { kindOf } from './json-rpc.js';
import { answerJson } from './web-bridge.js';

/** The one answer a request waits for: its client's id, and where to write the answer. */
interface Waiting {
  clientId: JSONRPCRequest['id'];
  answer: (message: JSONRPCMessage) => void;
}

/**
 * A transport that carries requests from many HTTP requests to one server: it hands each request
 * in under an id of its own and routes the server's answer back to the HTTP response waiting.
 * Anything the server sends unasked (a notification) has no stream to go to and is dropped, as on
 * the per-request path with JSON answers.
 */
class RoutingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 1;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isResponse(message)) return;
    const waiting = this.#waiting.get(message.id as number);
    if (waiting === undefined) return;
    this.#waiting.delete(message.id as number);
    waiting.answer({ ...message, id: waiting.clientId });
  }

  /** Closes the server's side; a request still waiting gets an error answer, not silence. */
  async close(): Promise<void> {
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    this.onclose?.();
    for (const { clientId, answer } of waiting) {
      answer({
        jsonrpc: '2.0',
        id: clientId,
        error: { code: -32000, message: 'Connection closed: the server is shutting down' },
      });
    }
  }

  /** Hands `request` to the server; returns how to cancel it (the client went away). */
  deliver(request: JSONRPCRequest, answer: Waiting['answer']): () => void {
    const id = this.#nextId++;
    this.#waiting.set(id, { clientId: request.id, answer });
    try {
      this.onmessage?.({ ...request, id });
    } catch (error) {
      this.#waiting.delete(id);
      throw error;
    }
    return () => {
      if (!this.#waiting.delete(id)) return;
      this.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'The client closed the connection' },
      });
    };
  }
}

/** One kept 2025-era server for the requests that need no stream. */
export class SharedLegacyServer {
  readonly #factory: McpServerFactory;
  readonly #streams: (body: unknown) => boolean;
  #transport: Promise<RoutingTransport> | undefined;

  /** `streams(body)` says whether a request may send before its answer (then it is not taken). */
  constructor(factory: McpServerFactory, streams: (body: unknown) => boolean) {
    this.#factory = factory;
    this.#streams = streams;
  }

  /**
   * Answers this 2025-era request here if the per-request path would serve it as a plain JSON
   * answer with no error of its transport; resolves whether it did.
   */
  async answerIfPlain(
    request: IncomingMessage,
    response: ServerResponse,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<boolean> {
    if (!this.#takes(request, body)) return false;
    await this.#answer(body, response, headers);
    return true;
  }

  #takes(request: IncomingMessage, body: unknown): body is JSONRPCRequest {
    if (this.#streams(body)) return false;
    const accept = request.headers.accept;
    if (
      accept === undefined ||
      !accept.includes('application/json') ||
      !accept.includes('text/event-stream')
    ) {
      return false;
    }
    if (!isJsonContentType(request.headers['content-type'])) return false;
    const version = request.headers['mcp-protocol-version'];
    if (
      version !== undefined &&
      (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
    ) {
      return false;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
    return (body as { method?: unknown }).method !== 'initialize' && kindOf(body) === 'request';
  }

  /** Answers `body` on `response` as JSON, with `headers` beside the content type. */
  async #answer(
    body: JSONRPCRequest,
    response: ServerResponse,
    headers: Record<string, string>,
  ): Promise<void> {
    const transport = await this.#connected();
    const answered = new Promise<JSONRPCMessage>((resolve) => {
      const cancel = transport.deliver(body, resolve);
      response.once('close', cancel);
    });
    const message = await answered;
    if (response.destroyed) return;
    answerJson(response, message, headers);
  }

  /** Closes the server (calls under way are cancelled). */
  async close(): Promise<void> {
    const transport = this.#transport;
    this.#transport = undefined;
    // One that could not be made has nothing to close.
    if (transport !== undefined) await (await transport.catch(() => undefined))?.close();
  }

  #connected(): Promise<RoutingTransport> {
    if (this.#transport !== undefined) return this.#transport;
    const connecting = (async () => {
      const server = await this.#factory({ era: 'legacy' });
      const transport = new RoutingTransport();
      await server.connect(transport);
      return transport;
    })();
    this.#transport = connecting;
    // A server that could not be made is tried again by the next request, not kept as a failure.
    connecting.catch(() => {
      if (this.#transport === connecting) this.#transport = undefined;
    });
    return connecting;
  }
}

/** An answer (the server's own message, so its shape is known: no schema parse needed). */
function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: JSONRPCRequest['id'] } {
  return 'id' in message && ('result' in message || 'error' in message);
}
