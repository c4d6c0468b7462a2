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
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { requestOf, type WebHandler } from './web-bridge.js';

/**
 * Whether a request (its body read and parsed) is of the 2025 era: the SDK's own decision, so the
 * entry and this never disagree. Asked without building a web `Request`: given the parsed body
 * the SDK reads only the method and the standard headers; should it ever need more, it throws and
 * is asked again with a real `Request`.
 */
export async function isLegacyBody(request: IncomingMessage, body: unknown): Promise<boolean> {
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
