/**
 * The common `tools/call` answered beside the SDK's per-request layers, not through them: a call of
 * an offered tool with a name and arguments and nothing else (2025-era: no `_meta`, so no progress
 * token; 2026-07-28: an envelope of protocol version, client info and capabilities only), on a
 * connection that asked for no log messages, whose answer is text. That is most calls a model
 * makes, and the SDK's dispatch cost as much as the rest of the serving process's JavaScript: a
 * schema parse of the request twice, one of the result, a request context with its closures and an
 * abort signal, each per call (docs/benchmarks.md, "Plain calls beside the SDK's layers").
 *
 * Only what the SDK would answer the same way is taken here, and every other message passes to
 * the SDK as it came. A taken request is one the SDK's request schema accepts as it stands (it
 * would hand the handler the same name and arguments). Its answer is written here only when it is a
 * result the SDK's result schema accepts unchanged: text blocks with nothing but their text, a
 * boolean `isError`, `structuredContent` and `_meta` objects (2026-07-28: neither of those, and
 * encoded by the SDK's own encoder). Any other answer (media, a resource, an error thrown) is handed
 * back to the SDK with the request, which then checks and encodes it as its own, errors included:
 * the same bytes either way (test/mcp-plain-calls*.test.ts). Cancellation (`notifications/cancelled`)
 * and the connection's close abort a call taken here as they abort the SDK's.
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  type RequestId,
  type Server,
  type Transport,
} from '@modelcontextprotocol/server';

/** What the path asks of the tool server it answers for. */
export interface PlainCallsOptions {
  /** Whether a call of `name` may be answered here now: the tool is offered, no log messages were asked for. */
  takes(name: string): boolean;
  /** Runs the call (toolhost's `tools/call` handler, without the SDK's request context). */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
}

/** A call answered here whose answer is for the SDK to check and send: a result, or what it threw. */
export type Settled = { result: CallToolResult } | { error: unknown };

/** Keys a taken request's `params` may have (the SDK's schema allows more; those go to the SDK). */
const PLAIN_PARAM_KEYS = new Set(['name', 'arguments', '_meta']);
/** Keys of a result written here; with any other, the SDK's schema decides. */
const PLAIN_RESULT_KEYS = new Set(['content', 'isError', 'structuredContent', '_meta']);
/** Keys of a result's `_meta` the SDK's schema checks (toolhost sets none of them). */
const CHECKED_META_KEYS = ['progressToken', 'io.modelcontextprotocol/related-task'];

/** The plain-call path of one MCP server: installed before the server connects. */
export class PlainCalls {
  readonly #options: PlainCallsOptions;
  /** Answers handed back to the SDK, by the request's id, until its handler takes them. */
  readonly #settled = new Map<RequestId, Settled>();

  constructor(options: PlainCallsOptions) {
    this.#options = options;
  }

  /**
   * Makes `server` take plain calls from the transport it connects to: its messages pass here
   * first. The SDK's entries connect the servers they make, so the hook is on `connect`. A
   * 2026-07-28 server takes them only where the SDK's own envelope check and result encoding can be
   * reached (see {@link modernWire}); otherwise every call goes to the SDK.
   */
  install(server: Server, era: 'legacy' | 'modern'): void {
    const connect = server.connect.bind(server);
    server.connect = async (transport: Transport) => {
      await connect(transport);
      const wire = era === 'legacy' ? LEGACY_WIRE : modernWire(server);
      if (wire !== undefined) this.#intercept(transport, wire);
    };
  }

  /**
   * For the SDK's `tools/call` handler: the answer of a call run here that the SDK is to send
   * (taken once), or `undefined` for a request the SDK runs itself.
   */
  takeSettled(id: RequestId): Settled | undefined {
    const settled = this.#settled.get(id);
    if (settled !== undefined) this.#settled.delete(id);
    return settled;
  }

  #intercept(transport: Transport, wire: PlainWire): void {
    const toSdk = transport.onmessage;
    const sdkOnClose = transport.onclose;
    const running = new Map<RequestId, AbortController>();
    transport.onmessage = (message, extra) => {
      // A message the entry classified (the opening one of a 2026-07-28 connection) goes to the SDK,
      // which checks the classification against the era it serves.
      const call = extra?.classification === undefined ? plainCallOf(message, wire) : undefined;
      if (call !== undefined && this.#options.takes(call.name)) {
        void this.#answer(call, running, transport, wire, () => toSdk?.(message, extra));
        return;
      }
      const cancelled = cancelledIdOf(message);
      if (cancelled !== undefined) running.get(cancelled)?.abort(reasonOf(message));
      toSdk?.(message, extra);
    };
    transport.onclose = () => {
      try {
        sdkOnClose?.();
      } finally {
        for (const controller of running.values()) controller.abort(new Error('Connection closed'));
        running.clear();
      }
    };
  }

  async #answer(
    call: PlainCall,
    running: Map<RequestId, AbortController>,
    transport: Transport,
    wire: PlainWire,
    handToSdk: () => void,
  ): Promise<void> {
    const controller = new AbortController();
    running.set(call.id, controller);
    const settled = await settle(this.#options, call, controller.signal);
    if (running.get(call.id) === controller) running.delete(call.id);
    // A cancelled call is answered by nobody, as the SDK does; a closed connection has no one to answer.
    if (controller.signal.aborted) return;
    const plain = 'result' in settled ? wire.encode(settled.result) : undefined;
    if (plain !== undefined) {
      // The SDK's own answer, key for key: `{ result, jsonrpc, id }`.
      const answer = { result: plain, jsonrpc: '2.0', id: call.id } as JSONRPCMessage;
      await transport.send(answer).catch(() => {});
      return;
    }
    this.#settled.set(call.id, settled);
    handToSdk();
  }
}

/** Runs `call` with `options`: what it returned, or what it threw. */
export async function settle(
  options: PlainCallsOptions,
  call: PlainCall,
  signal: AbortSignal,
): Promise<Settled> {
  try {
    return { result: await options.call(call.name, call.arguments, signal) };
  } catch (error) {
    return { error };
  }
}

export interface PlainCall {
  id: RequestId;
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * What differs between the protocol eras: which `params` make a plain call, and how a plain
 * result goes on the wire.
 */
export interface PlainWire {
  /** Whether `params` (a plain object holding only `name` and `arguments` besides `_meta`) are plain in this era. */
  takesMeta(meta: unknown): boolean;
  /** The result as the SDK would send it, or `undefined` to hand it to the SDK. */
  encode(result: CallToolResult): CallToolResult | undefined;
}

/** 2025-era: no `_meta` at all (no progress token), and a result the SDK's schema passes unchanged. */
const LEGACY_WIRE: PlainWire = {
  takesMeta: (meta) => meta === undefined,
  encode: plainResultOf,
};

/** The keys of a 2026-07-28 request's envelope a plain call may have: no log level, no progress token. */
const PLAIN_ENVELOPE_KEYS = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
]);

/** The parts of the SDK's `Server` a 2026-07-28 plain call needs: its era's codec and its identity. */
interface ServerWireInternals {
  _negotiatedWireCodec?: () => {
    checkInboundEnvelope?: (material: { envelope: Record<string, unknown> }) => string | undefined;
    encodeResult?: (method: string, result: unknown, serverInfo: unknown) => unknown;
  };
  _outboundServerInfo?: () => unknown;
}

/**
 * 2026-07-28: a request's `_meta` is its envelope, checked by the SDK's own check (the same call its
 * dispatch makes); a result of text blocks only, with no `_meta` or `structuredContent` of its own,
 * is encoded by the SDK's own encoder (which stamps `resultType` and the server's identity). Both
 * are the SDK's internals, not its API: where they are not found (another SDK version), `undefined`,
 * and every call takes the SDK's path.
 */
export function modernWire(server: Server): PlainWire | undefined {
  const internals = server as unknown as ServerWireInternals;
  const codecOf = internals._negotiatedWireCodec;
  const serverInfoOf = internals._outboundServerInfo;
  if (typeof codecOf !== 'function' || typeof serverInfoOf !== 'function') return undefined;
  // Asked for on every call, as the SDK's dispatch does: the codec of the era the server serves now.
  const codec = () => codecOf.call(server);
  const { checkInboundEnvelope, encodeResult } = codec();
  if (typeof checkInboundEnvelope !== 'function' || typeof encodeResult !== 'function') return undefined;
  return {
    takesMeta(meta) {
      if (!isPlainObject(meta)) return false;
      for (const key in meta) if (!PLAIN_ENVELOPE_KEYS.has(key)) return false;
      const era = codec();
      return era.checkInboundEnvelope?.({ envelope: { ...meta } }) === undefined;
    },
    encode(result) {
      const plain = plainResultOf(result);
      if (plain === undefined || plain._meta !== undefined || plain.structuredContent !== undefined)
        return undefined;
      const era = codec();
      return era.encodeResult?.('tools/call', plain, serverInfoOf.call(server)) as CallToolResult | undefined;
    },
  };
}

/**
 * `message` as a plain `tools/call`: a request whose params are a string `name`, if any an object
 * of `arguments` (what the SDK's request schema accepts and hands on unchanged), and a `_meta` the
 * era's wire takes; otherwise `undefined`. The transport checked it is a JSON-RPC message.
 */
export function plainCallOf(message: JSONRPCMessage, wire: PlainWire): PlainCall | undefined {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return undefined;
  const params: unknown = message.params;
  if (!isPlainObject(params)) return undefined;
  for (const key in params) if (!PLAIN_PARAM_KEYS.has(key)) return undefined;
  const name = params['name'];
  const args = 'arguments' in params ? params['arguments'] : {};
  if (typeof name !== 'string' || !isPlainObject(args) || hasOwnProto(args)) return undefined;
  if (!wire.takesMeta(params['_meta'])) return undefined;
  return { id: message.id, name, arguments: args };
}

/** The id a `notifications/cancelled` names, if `message` is one. */
function cancelledIdOf(message: JSONRPCMessage): RequestId | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message)
    return undefined;
  const requestId: unknown = message.params?.['requestId'];
  return typeof requestId === 'string' || typeof requestId === 'number' ? requestId : undefined;
}

function reasonOf(message: JSONRPCMessage): unknown {
  return 'params' in message ? message.params?.['reason'] : undefined;
}

/**
 * `result` as the SDK's `tools/call` result schema (2025-era) would give it back, when that schema
 * passes it through with nothing changed but the order of its keys (the schema's: `_meta`,
 * `content`, `structuredContent`, `isError`); otherwise `undefined`. That is: only text blocks, each
 * `{ type: 'text', text }`; `isError` a boolean; `structuredContent` and `_meta` objects, which the
 * schema copies key by key (no own `__proto__`, which a copy would lose; none of the keys the
 * schema checks in `_meta`).
 */
function plainResultOf(result: CallToolResult): CallToolResult | undefined {
  for (const key in result) if (!PLAIN_RESULT_KEYS.has(key)) return undefined;
  const { content, structuredContent, isError, _meta: meta } = result;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    if (!isPlainObject(block) || block['type'] !== 'text' || typeof block['text'] !== 'string')
      return undefined;
    for (const key in block) if (key !== 'type' && key !== 'text') return undefined;
  }
  if (isError !== undefined && typeof isError !== 'boolean') return undefined;
  if (structuredContent !== undefined && !isCopiedRecord(structuredContent)) return undefined;
  if (meta !== undefined && (!isCopiedRecord(meta) || CHECKED_META_KEYS.some((key) => key in meta))) {
    return undefined;
  }
  const plain = {} as CallToolResult;
  if (meta !== undefined) plain._meta = meta;
  plain.content = content;
  if (structuredContent !== undefined) plain.structuredContent = structuredContent;
  if (isError !== undefined) plain.isError = isError;
  return plain;
}

/** A record the SDK's schema copies key by key into a copy equal to it. */
function isCopiedRecord(value: unknown): boolean {
  return isPlainObject(value) && !hasOwnProto(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function hasOwnProto(value: object): boolean {
  return Object.hasOwn(value, '__proto__');
}
