/**
 * The common 2026-07-28 `tools/call` over Streamable HTTP answered beside the SDK's per-request
 * entry (`createMcpHandler`), not through it: the plain call of plain-calls.ts (an offered tool, a
 * name and arguments, an envelope of protocol version, client info and capabilities only, a text
 * answer). The entry cost each such POST a web `Request` and `Response`, a new MCP server and
 * transport, the SDK's dispatch and the transport's close (docs/benchmarks.md, "Plain calls beside
 * the SDK's layers").
 *
 * A POST is taken here only when the entry would serve it without a word of its own: the entry's
 * own checks run first, the SDK's exported ones as they are (`isJsonContentType`, the entry's 415;
 * `classifyInboundRequest`, its era, envelope and header cross-checks), and the rest held narrower
 * than the entry's (one revision; the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers
 * present, the name's verbatim). The envelope is checked and the answer encoded by the SDK's own
 * codec, of a server the entry made and bound to the revision (the first request of a client, a
 * `server/discover` or a `tools/list`, goes through the entry). Any
 * other POST goes to the entry as it came, and gets its answer, errors included. A call run here
 * whose answer is not plain (media, an error thrown) is handed to the entry with its request: the
 * SDK's `tools/call` handler then answers with what the call settled to (it is not run twice), and
 * the SDK checks and encodes it as its own. A client that goes away aborts its call, as the entry's
 * aborted request signal does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  classifyInboundRequest,
  isJsonContentType,
  type JSONRPCMessage,
  type McpServerFactory,
  type Server,
} from '@modelcontextprotocol/server';
import {
  modernWire,
  type PlainCallsOptions,
  type PlainWire,
  plainCallOf,
  type Settled,
  settle,
} from './plain-calls.js';
import { answerJson, answerWith, type WebHandler } from './web-bridge.js';

/** The revision this path serves: the one its server is bound to. */
const PLAIN_REVISION = '2026-07-28';
/** The prefix of an `Mcp-Name` value in the SDK's Base64 sentinel form (then the SDK decodes it). */
const NAME_SENTINEL_PREFIX = '=?';

/** Calls run here and handed to the entry, by the web request the entry hands the SDK's handler. */
const handedBack = new WeakMap<Request, Settled>();

/**
 * For the SDK's `tools/call` handler: what a call run here settled to, when the request it serves is
 * one this path handed to the entry (taken once); otherwise `undefined`.
 */
export function takeHandedBack(request: Request | undefined): Settled | undefined {
  if (request === undefined) return undefined;
  const settled = handedBack.get(request);
  if (settled !== undefined) handedBack.delete(request);
  return settled;
}

/** The 2026-07-28 plain-call path of one HTTP endpoint. */
export class PlainModernHttp {
  readonly #calls: PlainCallsOptions;
  readonly #entry: WebHandler;
  /** The era's wire, once a server the entry made is bound to {@link PLAIN_REVISION}. */
  #wire: PlainWire | undefined;
  /** The last 2026-07-28 server the entry made, until it is seen bound. */
  #candidate: Server | undefined;
  #closed = false;

  /** `entry` answers what is not taken here, and the calls handed back. */
  constructor(calls: PlainCallsOptions, entry: WebHandler) {
    this.#calls = calls;
    this.#entry = entry;
  }

  /**
   * The entry's server factory, watched: the plain path encodes with the codec of a server the
   * entry bound to the revision itself (the SDK binds a server to a request's revision by its own
   * internals, after the factory). Until one is seen, every call goes to the entry.
   */
  watching(factory: McpServerFactory): McpServerFactory {
    return async (context) => {
      const server = await factory(context);
      if (context.era === 'modern' && this.#wire === undefined) this.#candidate = server as Server;
      return server;
    };
  }

  /**
   * Answers a 2026-07-28 POST (its body read and parsed, the endpoint's own checks passed) if it is
   * a plain call the entry would serve; resolves whether it did.
   */
  async answerIfPlain(
    request: IncomingMessage,
    response: ServerResponse,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<boolean> {
    if (this.#closed || !isToolsCall(body) || !passesEntryChecks(request, body)) return false;
    const wire = this.#boundWire();
    const call = wire === undefined ? undefined : plainCallOf(body, wire);
    if (wire === undefined || call === undefined || !this.#calls.takes(call.name)) return false;
    const gone = new AbortController();
    const onClose = () => {
      if (!response.writableFinished) gone.abort(new Error('The client closed the connection'));
    };
    response.once('close', onClose);
    const settled = await settle(this.#calls, call, gone.signal);
    // A client that went away has no one to hear the answer, as on the entry's path.
    if (gone.signal.aborted) return true;
    const plain = 'result' in settled ? wire.encode(settled.result) : undefined;
    if (plain === undefined) {
      response.off('close', onClose);
      await answerWith(this.#entry, request, response, body, headers, (web) => handedBack.set(web, settled));
      return true;
    }
    // The entry's own answer, byte for byte: `{ result, jsonrpc, id }` as JSON, status 200.
    answerJson(response, { result: plain, jsonrpc: '2.0', id: call.id }, headers);
    return true;
  }

  /** Takes no more calls: the entry answers what comes after (its own refusal, once it is closed). */
  close(): void {
    this.#closed = true;
  }

  /** The wire of a server the entry bound to {@link PLAIN_REVISION}; `undefined` where this SDK has not the internals. */
  #boundWire(): PlainWire | undefined {
    const candidate = this.#candidate;
    if (this.#wire === undefined && candidate !== undefined && servesRevision(candidate)) {
      this.#candidate = undefined;
      this.#wire = modernWire(candidate);
    }
    return this.#wire;
  }
}

function isToolsCall(body: unknown): body is JSONRPCMessage {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    (body as { method?: unknown }).method === 'tools/call'
  );
}

/**
 * Whether the entry would hand `body` to its server with no answer of its own: a JSON body, the
 * SDK's classification a 2026-07-28 request of this revision, and the standard headers present
 * and agreeing with the body (the SDK's header rung passes all such; it refuses some this does
 * not take, which then get its answer).
 */
function passesEntryChecks(request: IncomingMessage, body: JSONRPCMessage): boolean {
  if (request.method !== 'POST' || !isJsonContentType(request.headers['content-type'])) return false;
  const protocolVersionHeader = single(request.headers['mcp-protocol-version']);
  const mcpMethodHeader = single(request.headers['mcp-method']);
  const mcpNameHeader = single(request.headers['mcp-name']);
  if (protocolVersionHeader === undefined || mcpMethodHeader === undefined || mcpNameHeader === undefined) {
    return false;
  }
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader,
    mcpMethodHeader,
    mcpNameHeader,
    body,
  });
  if (route.kind !== 'modern' || route.messageKind !== 'request') return false;
  if (route.classification.revision !== PLAIN_REVISION) return false;
  const name = (route.message.params as { name?: unknown } | undefined)?.name;
  return (
    typeof name === 'string' && !name.startsWith(NAME_SENTINEL_PREFIX) && trimmed(mcpNameHeader) === name
  );
}

/** A header given once (a repeated one is the entry's to judge). */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Without the optional white space (spaces, tabs) HTTP allows around a field value. */
function trimmed(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** Whether the entry bound `server` to {@link PLAIN_REVISION}. */
function servesRevision(server: Server): boolean {
  const internals = server as unknown as { _negotiatedProtocolVersion?: unknown };
  return internals._negotiatedProtocolVersion === PLAIN_REVISION;
}
