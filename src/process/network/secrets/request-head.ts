/**
 * A bound request as the proxy writes it upstream: its head written once, from what Node's server
 * parsed (strictly) and the swaps made, and its body framed by the proxy alone. What a tool wrote
 * is never copied as bytes: a body is re-chunked from the chunks the server's parser took apart,
 * and a header value, with a secret's value in it, is checked as Node's client checks one, so the
 * value can't end a header line or start a second request.
 */
import { EventEmitter } from 'node:events';
import type { UpstreamAnswer, UpstreamConnection } from './upstream.js';

/** What Node's client refuses in a header value (`ERR_INVALID_CHAR`). */
const INVALID_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** What Node's client refuses in a request's path (`ERR_UNESCAPED_CHARACTERS`). */
const INVALID_PATH = /[^\u0021-\u00ff]/;

/**
 * The request's head, ending with its empty line: `lines` are header names (lowercase tokens, as
 * the server parsed them) and values in turn, `host` the Host header's value.
 * Throws (with Node's client's code) for a value or path Node's client would refuse to write.
 */
export function requestHead(request: {
  method: string;
  path: string;
  host: string;
  lines: readonly string[];
  chunked: boolean;
}): string {
  if (INVALID_PATH.test(request.path))
    throw codedError('ERR_UNESCAPED_CHARACTERS', 'the path holds a character a request line may not');
  let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${request.host}\r\n`;
  const { lines } = request;
  for (let index = 0; index + 1 < lines.length; index += 2) {
    const value = lines[index + 1] as string;
    if (INVALID_HEADER_VALUE.test(value))
      throw codedError('ERR_INVALID_CHAR', `header ${lines[index]} holds a character a header may not`);
    head += `${lines[index]}: ${value}\r\n`;
  }
  if (request.chunked) head += 'transfer-encoding: chunked\r\n';
  return `${head}accept-encoding: identity\r\n\r\n`;
}

/**
 * Where a bound request's body goes: the upstream connection, each chunk framed anew when the body
 * is chunked, its drain heard only while this exchange is the connection's.
 */
export class RequestBody extends EventEmitter {
  readonly #connection: UpstreamConnection;
  readonly #answer: UpstreamAnswer;
  /** The body's length, or undefined for a chunked body. */
  readonly #length: number | undefined;
  #written = 0;

  /**
   * `length`: the body's Content-Length (its bytes are framed by it), or undefined for a chunked
   * body (each chunk framed here).
   */
  constructor(connection: UpstreamConnection, answer: UpstreamAnswer, length: number | undefined) {
    super();
    this.#connection = connection;
    this.#answer = answer;
    this.#length = length;
    const drain = () => this.emit('drain');
    connection.socket.on('drain', drain);
    const stop = () => connection.socket.off('drain', drain);
    answer.once('end', stop);
    answer.once('error', stop);
  }

  /** Writes a chunk of the body; false when the connection's buffer is full (wait for `drain`). */
  write(chunk: Buffer): boolean {
    if (this.#connection.answer !== this.#answer || chunk.length === 0) return true;
    const socket = this.#connection.socket;
    this.#written += chunk.length;
    if (this.#length !== undefined) return socket.write(chunk);
    socket.cork();
    socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
    socket.write(chunk);
    const more = socket.write('\r\n', 'latin1');
    socket.uncork();
    return more;
  }

  /** The body's last bytes, and for a chunked body its last chunk (no trailers: they are dropped). */
  end(chunk?: Buffer): void {
    if (chunk !== undefined) this.write(chunk);
    if (this.#connection.answer !== this.#answer) return;
    if (this.#length === undefined) this.#connection.socket.write('0\r\n\r\n', 'latin1');
    // A body cut short (a budget held it) leaves the connection to end after its answer.
    if (this.#length === undefined || this.#written === this.#length) this.#connection.bodyWritten();
  }
}

function codedError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
