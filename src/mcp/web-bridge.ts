/**
 * Node's `http` on one side, the web-standard `Request` → `Response` of the SDK's HTTP entry on
 * the other: the request (its body already read, bounded and parsed here) becomes a `Request` whose
 * signal aborts when the client goes away, and the `Response` is written back: a JSON body whole,
 * headers and body in one write (it is complete before it is sent); an SSE stream (a call that
 * sends progress or log messages, a `subscriptions/listen` stream) as it comes, no faster than the
 * client reads it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The entry's face: one HTTP request in, its response out. */
export type WebHandler = (request: Request, options: { parsedBody: unknown }) => Promise<Response>;

/**
 * Answers `request` with `handler`. A client that disconnects aborts the request's signal, which
 * the SDK takes as a cancellation (on stateless HTTP the only one there is: a
 * `notifications/cancelled` comes in another request, maybe to another instance). `made` is told
 * of the web request before the handler gets it.
 */
export async function answerWith(
  handler: WebHandler,
  request: IncomingMessage,
  response: ServerResponse,
  parsedBody: unknown,
  extraHeaders: Record<string, string>,
  made?: (webRequest: Request) => void,
): Promise<void> {
  const gone = new AbortController();
  const onClose = () => {
    if (!response.writableFinished) gone.abort();
  };
  response.once('close', onClose);
  // No body: the SDK's entries read the parsed one handed to them and never the request's own, which
  // would be copied here for nothing.
  const webRequest = requestOf(request, gone.signal);
  made?.(webRequest);
  const webResponse = await handler(webRequest, { parsedBody });
  const headers: Record<string, string> = { ...extraHeaders };
  webResponse.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (webResponse.body === null) {
    response.writeHead(webResponse.status, headers);
    response.end();
    return;
  }
  if (!isEventStream(webResponse)) {
    // Whole, then headers and body in one write, its length known (not chunked): a header write of
    // its own cost a system call and woke the client once more for every answer.
    const whole = Buffer.from(await webResponse.arrayBuffer());
    if (gone.signal.aborted) return;
    headers['content-length'] = String(whole.length);
    response.writeHead(webResponse.status, headers);
    response.end(whole);
    return;
  }
  response.writeHead(webResponse.status, headers);
  const reader = webResponse.body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  gone.signal.addEventListener('abort', cancel, { once: true });
  // SSE frames should reach the client as they are made, not when a buffer fills.
  response.flushHeaders();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!response.write(value)) {
        await new Promise<void>((resolve) => {
          const settle = () => {
            response.off('drain', settle);
            response.off('close', settle);
            resolve();
          };
          response.once('drain', settle);
          response.once('close', settle);
        });
      }
      if (gone.signal.aborted) return;
    }
    response.end();
  } finally {
    gone.signal.removeEventListener('abort', cancel);
  }
}

/** Answers with `message` as JSON, status 200, headers and body in one write with its length. */
export function answerJson(
  response: ServerResponse,
  message: unknown,
  headers: Record<string, string>,
): void {
  const text = JSON.stringify(message);
  response.writeHead(200, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** `request` as a web `Request` without its body, aborted by `signal`. */
export function requestOf(request: IncomingMessage, signal: AbortSignal): Request {
  return new Request(`http://${request.headers.host ?? 'localhost'}${request.url ?? '/'}`, {
    method: request.method ?? 'POST',
    headers: headersOf(request),
    signal,
  });
}

function isEventStream(response: Response): boolean {
  return response.headers.get('content-type')?.startsWith('text/event-stream') === true;
}

/** The request's headers as a `Headers` (repeated ones joined, as HTTP allows). */
function headersOf(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}
