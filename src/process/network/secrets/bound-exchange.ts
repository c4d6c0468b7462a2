/**
 * The two ends of a request to a bound host, as the swap sees them, whoever parsed the request: the
 * request (its head as parsed, its body as it comes) and where its answer goes. An intercepted
 * tunnel's connection provides them itself (bound-connection.ts); a plain-HTTP request forwarded by
 * the proxy's server provides them from Node's `IncomingMessage` and `ServerResponse`
 * ({@link nodeExchange}).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RelaySink, RelaySource } from '../relay.js';

/** A request as parsed (strictly), its body to come as `data` and `end`. */
export interface BoundRequest extends RelaySource {
  method: string;
  /** Header names and values in turn, as the tool sent them. */
  rawHeaders: readonly string[];
  /** Whether the body is chunked (it is framed anew upstream). */
  chunked: boolean;
  /** The body's Content-Length (undefined when chunked, or when there is no body). */
  contentLength: number | undefined;
  /** Ends the request's connection. */
  destroy(): void;
  /**
   * A budget held the body: the rest of it is not to be read once the answer ended (the connection
   * ends instead). Undefined where the reader can't stop (Node's server).
   */
  readNoMore?(): void;
}

/** Where a bound request's answer goes. */
export interface BoundAnswerSink extends RelaySink {
  readonly headersSent: boolean;
  /** The answer's status and header lines (names lowercase); `noBody`: HEAD, 204 or 304. */
  writeHead(statusCode: number, lines: string[], noBody: boolean): void;
  /** Ends the connection the answer goes on. */
  destroy(): void;
  /** `listener` is called once, when the exchange is over (answered whole, or ended). */
  whenClosed(listener: () => void): void;
  /** The connection to cork while one read of the answer is written (undefined: none). */
  readonly output: { cork(): void; uncork(): void } | undefined;
}

/** Whether a request carries a body, as its parser framed it: a length over 0, or chunks. */
export function hasBody(request: BoundRequest): boolean {
  return request.chunked || (request.contentLength !== undefined && request.contentLength > 0);
}

/** A request read by Node's server (`IncomingMessage`), and its `ServerResponse`, as the swap's ends. */
export function nodeExchange(
  req: IncomingMessage,
  res: ServerResponse,
): { request: BoundRequest; answer: BoundAnswerSink } {
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const length = req.headers['content-length'];
  const request: BoundRequest = {
    method: req.method ?? 'GET',
    rawHeaders: req.rawHeaders,
    chunked,
    contentLength: chunked || length === undefined ? undefined : Number(length),
    on: (event, listener) => req.on(event, listener),
    once: (event, listener) => req.once(event, listener),
    pause: () => req.pause(),
    resume: () => req.resume(),
    destroy: () => req.socket.destroy(),
  };
  const answer: BoundAnswerSink = {
    get headersSent() {
      return res.headersSent;
    },
    writeHead: (statusCode, lines) => {
      res.writeHead(statusCode, lines);
    },
    write: (chunk) => res.write(chunk),
    end: (chunk?: Buffer) => {
      if (chunk === undefined) res.end();
      else res.end(chunk);
    },
    on: (event, listener) => res.on(event, listener),
    destroy: () => res.destroy(),
    whenClosed: (listener) => res.once('close', listener),
    get output() {
      return res.socket ?? undefined;
    },
  };
  req.on('error', () => res.destroy());
  return { request, answer };
}
