/**
 * 2025-era requests over stateless HTTP: a new server and transport for each (the SDK's stateless
 * idiom, no session id issued or checked), as the SDK's own legacy fallback does, with one
 * difference: a request that will send nothing before its answer (no progress token, and no log
 * messages asked for) gets its answer as plain JSON, which costs less than a stream (the spec lets
 * the server choose).
 */
import type { IncomingMessage } from 'node:http';
import {
  isLegacyRequest,
  type McpServerFactory,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { kindOf } from './json-rpc.js';
import { requestOf, type WebHandler } from './web-bridge.js';

/** The first protocol revision of the 2026 era; every earlier one (they all start `2025`, `2024`) is of the 2025 era. */
const FIRST_MODERN_YEAR = '2026';

/**
 * Whether a request (its body read and parsed) is of the 2025 era: the SDK's own decision, so the
 * entry and this never disagree. Asked without building a web `Request`: given the parsed body
 * the SDK reads only the method and the standard headers; should it ever need more, it throws and
 * is asked again with a real `Request`.
 */
export async function isLegacyBody(request: IncomingMessage, body: unknown): Promise<boolean> {
  if (isPlainLegacyRequest(request, body)) return true;
  const headers = {
    get: (name: string) => {
      const value = request.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
  try {
    return await isLegacyRequest({ method: request.method ?? 'POST', headers } as unknown as Request, body);
  } catch {
    return isLegacyRequest(requestOf(request, new AbortController().signal), body);
  }
}

/**
 * The common 2025-era POST, told without the SDK's classification (three schema parses, two of
 * which fail and build their errors): one JSON-RPC request (the hand check the SDK's guards are
 * held to), not `initialize`, with no envelope claim (no protocol version in its `_meta`), and no
 * `MCP-Protocol-Version` header or one naming a 2025-era revision. The SDK classifies each of these
 * as 2025-era too; `false` means "ask the SDK", not "modern".
 */
export function isPlainLegacyRequest(request: IncomingMessage, body: unknown): boolean {
  if (request.method !== 'POST' || kindOf(body) !== 'request') return false;
  const { method, params } = body as { method: string; params?: { _meta?: unknown } };
  if (method === 'initialize') return false;
  const meta = params?._meta;
  if (typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta) return false;
  const version = request.headers['mcp-protocol-version'];
  // Compared as the SDK does (revisions are dates), with no white space around it to strip first.
  return (
    version === undefined ||
    (typeof version === 'string' && /^\d/.test(version) && version < FIRST_MODERN_YEAR)
  );
}

/** A handler for 2025-era requests; `streams(body)` says whether a request may send before its answer. */
export function legacyHandler(factory: McpServerFactory, streams: (body: unknown) => boolean): WebHandler {
  return async (request, { parsedBody }) => {
    const server = await factory({ era: 'legacy', requestInfo: request });
    const transport = new WebStandardStreamableHTTPServerTransport(
      streams(parsedBody) ? {} : { enableJsonResponse: true },
    );
    await server.connect(transport);
    let closed = false;
    // When the client goes away before its answer (or after it), the server closes, which aborts
    // a call still running.
    const teardown = () => {
      if (closed) return;
      closed = true;
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    };
    request.signal.addEventListener('abort', teardown, { once: true });
    const response = await transport.handleRequest(request, { parsedBody });
    if (response.body === null || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      teardown();
      return response;
    }
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const { done, value } = await reader.read();
          if (done) {
            teardown();
            controller.close();
          } else {
            controller.enqueue(value);
          }
        } catch (error) {
          teardown();
          controller.error(error);
        }
      },
      cancel: async (reason) => {
        teardown();
        await reader.cancel(reason).catch(() => {});
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

/** Whether any request in a body (one message or a batch) carries a progress token. */
export function asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}
