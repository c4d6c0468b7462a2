/**
 * The hosting process's end of the relay channel (see channel.ts), as an MCP `Transport`: the first
 * line the relay sends is the channel's key and the process's settings; every later line is one of
 * the client's messages. Every message this side sends is signed.
 */
import type { Duplex } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { LineSplitter, parseMessage, signedLine } from './channel.js';

/** The longest line the channel carries: a tool's 10 MiB reply as JSON, with room to spare. */
export const MAX_CHANNEL_LINE_BYTES = 64 * 1024 * 1024;

/**
 * The hosting process's first message, signed as every other: it hears SIGTERM from now on, so
 * the relay may send it. Never passed on to the client.
 */
export const HEARS_SIGNALS_METHOD = 'notifications/toolhost/hears-signals';

/** What the relay sends first. */
export interface ChannelGreeting {
  /** The signing key, hex. */
  key: string;
  /** The hosting process's settings (the parsed command line). */
  settings: unknown;
}

/** The hosting process's end of the relay channel: an MCP `Transport` whose every sent line is signed. */
export class ChannelServerTransport implements Transport {
  readonly #socket: Duplex;
  readonly #key: Buffer;
  #queued: string[] | undefined = [];
  #closed = false;
  #ended: () => void = () => {};
  /**
   * Resolves when the channel closed (the relay is gone) or the transport was closed: the SDK's
   * entry owns `onclose`, and the hosting process must still hear of it.
   */
  readonly ended = new Promise<void>((resolve) => {
    this.#ended = resolve;
  });
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private constructor(socket: Duplex, key: Buffer) {
    this.#socket = socket;
    this.#key = key;
  }

  /**
   * Reads the relay's greeting from `socket`, then hands back the transport for the rest. Lines that
   * arrive before {@link start} wait for it (the host loads its tools meanwhile).
   */
  static open(socket: Duplex): Promise<{ settings: unknown; transport: ChannelServerTransport }> {
    return new Promise((resolve, reject) => {
      let transport: ChannelServerTransport | undefined;
      const splitter = new LineSplitter({
        maxLineBytes: MAX_CHANNEL_LINE_BYTES,
        onLine: (line) => {
          if (transport !== undefined) {
            transport.#receive(line);
            return;
          }
          const greeting = parseGreeting(line);
          if (greeting === undefined) {
            reject(new Error('the relay channel did not start with a greeting'));
            return;
          }
          transport = new ChannelServerTransport(socket, Buffer.from(greeting.key, 'hex'));
          resolve({ settings: greeting.settings, transport });
        },
        onDropped: () =>
          transport?.onerror?.(new Error('an over-long line on the relay channel was dropped')),
      });
      socket.on('data', (chunk: Buffer) => splitter.push(chunk));
      socket.on('error', (error) => transport?.onerror?.(error));
      socket.once('close', () => {
        if (transport === undefined) reject(new Error('the relay channel closed before its greeting'));
        else transport.#end();
      });
      socket.once('end', () => {
        if (transport !== undefined) transport.#end();
      });
    });
  }

  async start(): Promise<void> {
    const queued = this.#queued ?? [];
    this.#queued = undefined;
    for (const line of queued) this.#receive(line);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      // A write error means the relay is gone; the socket's 'error' and 'close' say so.
      this.#socket.write(signedLine(this.#key, message), () => resolve());
    });
  }

  async close(): Promise<void> {
    if (!this.#closed) this.#socket.end();
    this.#end();
  }

  #receive(line: string): void {
    if (this.#queued !== undefined) {
      this.#queued.push(line);
      return;
    }
    const message = parseMessage(line);
    if (message === undefined)
      this.onerror?.(new Error('a line on the relay channel is not a JSON-RPC message'));
    else this.onmessage?.(message);
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ended();
    this.onclose?.();
  }
}

function parseGreeting(line: string): ChannelGreeting | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null) return undefined;
    const { key, settings } = value as Record<string, unknown>;
    return typeof key === 'string' && /^[0-9a-f]{64}$/.test(key) ? { key, settings } : undefined;
  } catch {
    return undefined;
  }
}
