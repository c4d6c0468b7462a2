/**
 * The two ends of one request on an intercepted connection (bound-connection.ts), with no stream
 * or `ServerResponse` under them: the request as the parser read it (its body handed on as parsed,
 * or held until its turn), and its answer, framed by the proxy alone on the connection.
 */
import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { BoundAnswerSink, BoundRequest } from './bound-exchange.js';

/** A request read on an intercepted connection: `data` and `end` once its turn came. */
export class RawRequest extends EventEmitter implements BoundRequest {
  readonly method: string;
  readonly path: string;
  readonly rawHeaders: readonly string[];
  readonly keepAlive: boolean;
  readonly upgrade: boolean;
  readonly chunked: boolean;
  readonly contentLength: number | undefined;
  /** The first Host header (as Node's server keeps it), and whether it asks for `100 Continue`. */
  readonly host: string | undefined;
  readonly expectsContinue: boolean;
  readonly #socket: Socket | TLSSocket;
  /** What of the body came before its turn (a request read while another was in flight). */
  #held: Buffer[] | undefined = [];
  #ended = false;
  /** A budget held the body: nothing more of it is read, and the connection ends after the answer. */
  readsNoMore = false;

  constructor(
    socket: Socket | TLSSocket,
    head: {
      method: string;
      path: string;
      rawHeaders: readonly string[];
      keepAlive: boolean;
      upgrade: boolean;
    },
  ) {
    super();
    this.#socket = socket;
    this.method = head.method;
    this.path = head.path;
    this.rawHeaders = head.rawHeaders;
    this.keepAlive = head.keepAlive;
    this.upgrade = head.upgrade;
    let chunked = false;
    let length: number | undefined;
    let host: string | undefined;
    let expectsContinue = false;
    const lines = head.rawHeaders;
    // The parser refused any framing it could read two ways (both headers, two lengths, chunked not last).
    for (let index = 0; index + 1 < lines.length; index += 2) {
      const name = (lines[index] as string).toLowerCase();
      const value = lines[index + 1] as string;
      if (name === 'transfer-encoding') chunked = true;
      else if (name === 'content-length') length = Number(value);
      else if (name === 'host') host ??= value;
      else if (name === 'expect') expectsContinue ||= value.toLowerCase() === '100-continue';
    }
    this.chunked = chunked;
    this.contentLength = chunked ? undefined : length;
    this.host = host;
    this.expectsContinue = expectsContinue;
  }

  /** Body bytes as the parser reads them. */
  push(bytes: Buffer): void {
    if (this.#held === undefined) this.emit('data', bytes);
    else this.#held.push(bytes);
  }

  /** The body ended. */
  finish(): void {
    this.#ended = true;
    if (this.#held === undefined) this.emit('end');
  }

  /** Its turn came (its relay listens): what was held goes on. */
  flush(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const bytes of held) this.emit('data', bytes);
    if (this.#ended) this.emit('end');
  }

  readNoMore(): void {
    this.readsNoMore = true;
  }

  /** Holds the connection's reading (a body faster than its upstream), while its body is read. */
  pause(): void {
    if (!this.#ended) this.#socket.pause();
  }

  resume(): void {
    if (!this.#ended) this.#socket.resume();
  }

  destroy(): void {
    this.#socket.destroy();
  }
}

/**
 * An answer on an intercepted connection: chunked (its length changes when a value is swapped
 * back), or with its own length (the proxy's own answers, and those without a body), or to the
 * close for a client that closes. `done` hears whether the connection may read its next request.
 */
export class RawAnswer extends EventEmitter implements BoundAnswerSink {
  readonly #socket: Socket | TLSSocket;
  #keepAlive: boolean;
  readonly #done: (keepOpen: boolean) => void;
  readonly #closed: Array<() => void> = [];
  #chunked = false;
  #noBody = false;
  #over = false;
  /** Whether the head went out on the connection (until then, another head may replace it). */
  #headOut = false;
  /**
   * Text written with the next bytes rather than alone (the head, the end of the last chunk): an
   * answer in one read is three writes into the cork, not five.
   */
  #pending = '';
  readonly #drain = () => this.emit('drain');

  constructor(socket: Socket | TLSSocket, keepAlive: boolean, done: (keepOpen: boolean) => void) {
    super();
    this.#socket = socket;
    this.#keepAlive = keepAlive;
    this.#done = done;
  }

  /**
   * Whether the head went out: a head written but held for the answer's first bytes does not count,
   * so an answer that breaks before them can still be answered 502.
   */
  get headersSent(): boolean {
    return this.#headOut;
  }

  get output(): Socket | TLSSocket {
    return this.#socket;
  }

  writeHead(statusCode: number, lines: string[], noBody: boolean): void {
    if (!Number.isInteger(statusCode) || statusCode < 100 || statusCode > 999)
      throw new RangeError(`status ${statusCode} can't be written`);
    let head = `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Unknown'}\r\n`;
    let length = false;
    for (let index = 0; index + 1 < lines.length; index += 2) {
      if (lines[index] === 'content-length') length = true;
      head += `${lines[index]}: ${lines[index + 1]}\r\n`;
    }
    this.#noBody = noBody;
    this.#chunked = !noBody && !length && this.#keepAlive;
    if (this.#chunked) head += 'transfer-encoding: chunked\r\n';
    if (!this.#keepAlive) head += 'connection: close\r\n';
    this.#pending = `${head}\r\n`;
    this.#socket.off('drain', this.#drain);
    this.#socket.on('drain', this.#drain);
  }

  write(chunk: Buffer): boolean {
    if (this.#over || this.#noBody || chunk.length === 0) return true;
    const socket = this.#socket;
    if (!this.#chunked) {
      this.#flush();
      return socket.write(chunk);
    }
    socket.cork();
    socket.write(`${this.#pending}${chunk.length.toString(16)}\r\n`, 'latin1');
    this.#pending = '\r\n';
    this.#headOut = true;
    const more = socket.write(chunk);
    socket.uncork();
    return more;
  }

  /** Writes what waits to go with the next bytes. */
  #flush(): void {
    if (this.#pending === '') return;
    this.#socket.write(this.#pending, 'latin1');
    this.#pending = '';
    this.#headOut = true;
  }

  end(chunk?: Buffer): void {
    if (this.#over) return;
    if (chunk !== undefined) this.write(chunk);
    if (this.#chunked) this.#pending += '0\r\n\r\n';
    this.#flush();
    this.#finish();
    this.#done(this.#keepAlive);
  }

  /** `100 Continue`, for a request that expects it before its body. */
  continue(): void {
    this.#socket.write('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
  }

  /** The proxy's own answer, `message` as text, and the connection closed after it. */
  refuse(statusCode: number, message: string): void {
    this.#keepAlive = false;
    const body = Buffer.from(message, 'utf8');
    this.writeHead(
      statusCode,
      ['content-type', 'text/plain; charset=utf-8', 'content-length', String(body.length)],
      false,
    );
    this.end(body);
  }

  destroy(): void {
    if (this.#over) return;
    this.#finish();
    this.#socket.destroy();
  }

  whenClosed(listener: () => void): void {
    if (this.#over) listener();
    else this.#closed.push(listener);
  }

  #finish(): void {
    this.#over = true;
    this.#socket.off('drain', this.#drain);
    for (const listener of this.#closed) listener();
  }
}
