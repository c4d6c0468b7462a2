/**
 * The proxy's own kept-alive connections to the hosts secrets are bound to, without Node's HTTP
 * client: a request's head goes out as the proxy wrote it (one write), and each answer is read by
 * Node's own HTTP parser (llhttp, strict: the parser Node's `http` client uses, so the framing both
 * read is the same), its head and body handed on as they are parsed. A connection serves one
 * exchange at a time and goes back to its pool only when an answer ended whole, the server kept it
 * alive, and nothing came after the answer: bytes no request asked for (a second answer, a length
 * that lied) end the connection, never the next exchange's answer.
 */
import { EventEmitter } from 'node:events';
import { connect as netConnect, type Socket } from 'node:net';
import { type SecureContext, connect as tlsConnect } from 'node:tls';
import { type LlhttpParser, requireNodeHttpParser } from './node-http-parser.js';

/** The largest answer head read (Node's http client's default). */
const MAX_ANSWER_HEAD = 16 * 1024;
/** The most kept-alive connections idle per upstream. */
const MAX_IDLE_PER_UPSTREAM = 32;

/** Where a connection goes: the address decided on, and for TLS the name its certificate must hold. */
export interface UpstreamTarget {
  address: string;
  port: number;
  secure: boolean;
  /** The name sent in SNI and checked in the certificate (undefined: the address itself). */
  servername: string | undefined;
}

/**
 * One exchange's answer, as it is parsed: `response` (status code, raw header lines: names and
 * values in turn), `data` (body bytes), `end`, or `error` (an `Error` with a `code`; no `end`
 * follows). `pause` and `resume` hold the connection's reads for this exchange only.
 */
export class UpstreamAnswer extends EventEmitter {
  readonly #connection: UpstreamConnection;
  /** Whether its head came (a failure after it cuts the answer short; before it, nothing was said). */
  responded = false;
  /**
   * Where the answer is written, once its head came (corked there when it is set): what one read
   * of the answer brings goes out as one write, and nothing waits past that read.
   */
  output: { cork(): void; uncork(): void } | undefined;

  constructor(connection: UpstreamConnection) {
    super();
    this.#connection = connection;
  }

  pause(): void {
    if (this.#connection.answer === this) this.#connection.socket.pause();
  }

  resume(): void {
    if (this.#connection.answer === this) this.#connection.socket.resume();
  }

  /** Ends the connection if it still serves this exchange (once it went back to its pool, nothing). */
  destroy(): void {
    if (this.#connection.answer === this)
      this.#connection.fail(failure('ECONNRESET', 'the exchange was ended'));
  }
}

/** One kept-alive connection to an upstream and its answer parser. */
export class UpstreamConnection {
  readonly socket: Socket;
  /** The exchange it serves now. */
  answer: UpstreamAnswer | undefined;
  readonly #pool: UpstreamPool;
  readonly #key: string;
  readonly #parser: LlhttpParser;
  /** Header lines the parser handed over before the head was complete (over 32, or split reads). */
  #headerLines: string[] = [];
  /** Whether the parser is in an answer's head (header lines after it are trailers). */
  #inHead = false;
  #skipBody = false;
  #informational = false;
  #keepAlive = false;
  #complete = false;
  /** Bytes came that no exchange asked for: the connection is not used again. */
  #spoiled = false;
  /** The request's body is all written (an answer that ends before it leaves the connection unusable). */
  #requestWhole = true;
  /** The server ended its side: an answer framed by the close ends here, any other is cut short. */
  #ended = false;

  constructor(pool: UpstreamPool, key: string, socket: Socket) {
    this.#pool = pool;
    this.#key = key;
    this.socket = socket;
    const { HTTPParser } = requireNodeHttpParser();
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.RESPONSE, {}, MAX_ANSWER_HEAD, 0);
    parser[HTTPParser.kOnMessageBegin] = () => {
      // Each answer starts clean: nothing of the one before (its trailers, say) is carried over.
      this.#headerLines = [];
      this.#inHead = true;
      // A second answer to one request, or one before any request: no exchange may read it.
      if (this.answer === undefined || this.#complete) this.#spoiled = true;
    };
    parser[HTTPParser.kOnHeaders] = (lines: string[]) => {
      // Past the head, llhttp hands over a chunked body's trailers: dropped, never a header.
      if (!this.#inHead) return;
      for (const line of lines) this.#headerLines.push(line);
    };
    parser[HTTPParser.kOnHeadersComplete] = this.#onHead.bind(this);
    parser[HTTPParser.kOnBody] = (bytes: Buffer) => {
      if (!this.#spoiled && !this.#informational) this.answer?.emit('data', bytes);
    };
    parser[HTTPParser.kOnMessageComplete] = () => {
      if (this.#spoiled) return;
      if (this.#informational) this.#informational = false;
      else this.#complete = true;
    };
    this.#parser = parser;
    socket.on('data', (bytes: Buffer) => {
      const answer = this.answer;
      if (answer === undefined) {
        this.fail(failure('ECONNRESET', 'the server sent bytes no request asked for'));
        return;
      }
      answer.output?.cork();
      this.#parsed(this.#parser.execute(bytes));
      answer.output?.uncork();
    });
    socket.once('end', () => {
      this.#ended = true;
      if (this.answer !== undefined) this.#parsed(this.#parser.finish() ?? 0);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => this.fail(error));
    socket.once('close', () => {
      this.#pool.forget(this.#key, this);
      this.fail(failure('ECONNRESET', 'socket hang up'));
      parser.close();
    });
  }

  /**
   * Sends a request's head (latin1, as Node's client writes one); its answer comes on the return. With
   * `bodyFollows`, the connection is used again only after {@link bodyWritten}.
   */
  send(head: string, method: string, bodyFollows: boolean): UpstreamAnswer {
    const answer = new UpstreamAnswer(this);
    this.answer = answer;
    this.#skipBody = method === 'HEAD';
    this.#complete = false;
    this.#requestWhole = !bodyFollows;
    this.socket.write(head, 'latin1');
    return answer;
  }

  /** The request's body is all written. */
  bodyWritten(): void {
    this.#requestWhole = true;
  }

  /** Ends the connection and, if an exchange is open, tells it why. */
  fail(error: NodeJS.ErrnoException): void {
    this.#spoiled = true;
    const answer = this.answer;
    this.answer = undefined;
    this.socket.destroy();
    answer?.emit('error', error);
  }

  #onHead(
    _major: number,
    _minor: number,
    lines: string[] | undefined,
    _method: number,
    _url: string,
    statusCode: number,
    _statusMessage: string,
    upgrade: boolean,
    keepAlive: boolean,
  ): number {
    const all = lines === undefined ? this.#headerLines : [...this.#headerLines, ...lines];
    this.#headerLines = [];
    this.#inHead = false;
    const answer = this.answer;
    if (this.#spoiled || answer === undefined) return 1;
    if (upgrade || statusCode === 101) {
      // No request asked to switch protocols: whatever follows is not HTTP this proxy may read.
      this.#spoiled = true;
      return 1;
    }
    if (statusCode < 200) {
      // 100 Continue and its kind: not the answer; the real one follows.
      this.#informational = true;
      return 1;
    }
    this.#keepAlive = keepAlive;
    answer.responded = true;
    answer.emit('response', statusCode, all);
    return this.#skipBody ? 1 : 0;
  }

  /** After the parser read a chunk (or the end): the failure, or the answer's end and the pool. */
  #parsed(result: number | Error): void {
    const answer = this.answer;
    if (answer === undefined) return;
    if (result instanceof Error) {
      // Past a whole answer, what did not parse is only more of what no request asked for.
      if (this.#complete) this.#spoiled = true;
      else {
        this.fail(result as NodeJS.ErrnoException);
        return;
      }
    }
    if ((this.#spoiled || this.#ended) && !this.#complete) {
      this.fail(failure('ECONNRESET', 'the server broke off the answer or sent what no request asked for'));
      return;
    }
    if (!this.#complete) return;
    this.answer = undefined;
    // An answer before the whole body (a refusal, say) leaves the rest of the body unsent: the server
    // would read it as the next request.
    if (this.#keepAlive && this.#requestWhole && !this.#spoiled && !this.#ended)
      this.#pool.release(this.#key, this);
    else this.socket.destroy();
    answer.emit('end');
  }
}

/** The proxy's kept-alive connections to bound upstreams, by target; TLS sessions resumed. */
export class UpstreamPool {
  readonly #idle = new Map<string, UpstreamConnection[]>();
  readonly #sessions = new Map<string, Buffer>();
  readonly #context: SecureContext | undefined;
  readonly #idleTimeoutMs: number;
  #closed = false;

  /** `context`: the trust store upstream certificates are checked against (undefined: Node's). */
  constructor(options: { context: SecureContext | undefined; idleTimeoutMs: number }) {
    this.#context = options.context;
    this.#idleTimeoutMs = options.idleTimeoutMs;
  }

  /** An idle connection to `target`, or a new one (its writes wait for the handshake). */
  take(target: UpstreamTarget): UpstreamConnection {
    const key = `${target.secure ? 'https' : 'http'} ${target.address} ${target.port} ${target.servername ?? ''}`;
    const idle = this.#idle.get(key);
    const kept = idle?.pop();
    if (idle?.length === 0) this.#idle.delete(key);
    if (kept !== undefined) return kept;
    const socket = target.secure
      ? tlsConnect({
          host: target.address,
          port: target.port,
          ...(target.servername === undefined ? {} : { servername: target.servername }),
          ...(this.#context === undefined ? {} : { secureContext: this.#context }),
          ...(this.#sessions.has(key) ? { session: this.#sessions.get(key) } : {}),
        })
      : netConnect({ host: target.address, port: target.port });
    socket.setNoDelay(true);
    socket.setTimeout(this.#idleTimeoutMs, () =>
      connection.fail(failure('ETIMEDOUT', 'the server went quiet')),
    );
    if (target.secure) socket.on('session', (session: Buffer) => this.#sessions.set(key, session));
    const connection = new UpstreamConnection(this, key, socket);
    return connection;
  }

  /** Keeps a connection whose answer ended whole, for the next request to its target. */
  release(key: string, connection: UpstreamConnection): void {
    const idle = this.#idle.get(key) ?? [];
    if (this.#closed || idle.length >= MAX_IDLE_PER_UPSTREAM) {
      connection.socket.destroy();
      return;
    }
    // Held by an exchange's backpressure perhaps: an idle connection reads, to see its server close.
    connection.socket.resume();
    idle.push(connection);
    this.#idle.set(key, idle);
  }

  /** Drops a connection that closed from the idle ones. */
  forget(key: string, connection: UpstreamConnection): void {
    const idle = this.#idle.get(key);
    if (idle === undefined) return;
    const at = idle.indexOf(connection);
    if (at >= 0) idle.splice(at, 1);
    if (idle.length === 0) this.#idle.delete(key);
  }

  /** Ends the idle connections; those in use end with their exchange. */
  close(): void {
    this.#closed = true;
    for (const idle of this.#idle.values()) for (const connection of idle) connection.socket.destroy();
    this.#idle.clear();
  }
}

function failure(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
