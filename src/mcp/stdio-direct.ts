/**
 * `toolhost serve` over stdio in one process (see src/cli/commands/serve-direct.ts): the MCP server
 * reads the client's lines from stdin and writes its messages to stdout itself, with no relay in
 * between. Used only where no tool code runs in this process (docs/mcp.md, "Over stdio: direct or
 * relayed"), so what reaches stdout is this process's own doing; {@link claimStdout} makes sure
 * that the MCP server is the only part of it that writes there.
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { LineSplitter, parseMessage } from './channel.js';
import { MAX_CLIENT_LINE_BYTES } from './stdio-relay.js';

/** Writes one line of the protocol: the only way to this process's stdout once it is claimed. */
export type ProtocolWrite = (line: string, done: () => void) => void;

/**
 * Takes `stdout` for the protocol: everything else that writes to it from now on (a `console.log`
 * in the host's code or a dependency, a worker thread's stdout piped to the process's, as Node does
 * by default) goes to `stderr` instead. Returns the one write left to the protocol.
 */
export function claimStdout(stdout: Writable, stderr: Writable): ProtocolWrite {
  const write = stdout.write.bind(stdout) as (chunk: string, done: (error?: Error | null) => void) => boolean;
  // An own property, found before the prototype's: console and `pipe()` look `write` up on the object.
  stdout.write = ((...args: Parameters<Writable['write']>) => stderr.write(...args)) as Writable['write'];
  return (line, done) => {
    if (stdout.writable) write(line, () => done());
    else done();
  };
}

/**
 * The server's end of stdio as an MCP `Transport`. Lines are read here, not by the SDK's stdio
 * transport, for the checks the relay makes on the client's lines: a line longer than
 * {@link MAX_CLIENT_LINE_BYTES} is dropped whole (the reader never holds more), a line that is not a
 * JSON-RPC message is dropped. And unlike the SDK's, it keeps writing once stdin ends: a client that
 * closed stdin still gets an answer to every request it sent (`onInputEnd` starts the shut-down).
 */
export class DirectStdioTransport implements Transport {
  readonly #stdin: Readable;
  readonly #write: ProtocolWrite;
  #queued: JSONRPCMessage[] | undefined = [];
  #closed = false;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /**
   * Starts reading `stdin` at once (what arrives before {@link start} waits for it), so that its end
   * is heard while the host is still loading.
   */
  constructor(stdin: Readable, write: ProtocolWrite, onInputEnd: () => void) {
    this.#stdin = stdin;
    this.#write = write;
    const lines = new LineSplitter({
      maxLineBytes: MAX_CLIENT_LINE_BYTES,
      onLine: (line) => {
        const message = line === '' ? undefined : parseMessage(line);
        if (message !== undefined) this.#receive(message);
      },
      onDropped: () => {},
    });
    stdin.on('data', (chunk: Buffer | string) =>
      lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk),
    );
    stdin.on('error', () => {});
    stdin.once('end', onInputEnd);
    stdin.once('close', onInputEnd);
  }

  async start(): Promise<void> {
    const queued = this.#queued ?? [];
    this.#queued = undefined;
    for (const message of queued) this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#write(`${JSON.stringify(message)}\n`, resolve));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.destroy();
    this.onclose?.();
  }

  #receive(message: JSONRPCMessage): void {
    if (this.#closed) return;
    if (this.#queued !== undefined) this.#queued.push(message);
    else this.onmessage?.(message);
  }
}
