/**
 * The client's end of a server's stdio, as an MCP `Transport`: one JSON-RPC message per line,
 * bounded. A line over {@link MAX_MESSAGE_BYTES} is dropped as it arrives (never held whole), a
 * line that is not a JSON-RPC message (a server printing its banner on stdout) is dropped and
 * counted; nothing the server writes reaches the host's own stdout. Requests the host does not
 * serve (sampling, elicitation) are answered here with an error that says so.
 */
import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, parseJSONRPCMessage, type Transport } from '@modelcontextprotocol/client';

/** The longest line a server may send: a tools/list page of real servers is well under it. */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** The deepest nesting of objects and arrays in a message (real ones stay under 40). */
export const MAX_MESSAGE_DEPTH = 256;

/**
 * The JSON-RPC error code of the answer the transport makes for a reply it can't pass on (a line
 * that names a request in flight but is no JSON-RPC message): its call is `TOOL_BAD_RESULT`.
 */
export const MALFORMED_REPLY_CODE = -32098;

/** What the transport dropped of a server's stdout. */
export interface DroppedOutput {
  /** Lines that were not JSON-RPC messages. */
  garbageLines: number;
  /** Lines longer than {@link MAX_MESSAGE_BYTES}. */
  oversizedLines: number;
}

/** Requests a server may send that the host does not serve, and why, as the server is told. */
const REFUSED_REQUESTS: Readonly<Record<string, string>> = {
  'sampling/createMessage':
    'toolhost does not offer sampling to MCP servers: a sandboxed server gets no access to a model',
  'elicitation/create':
    'toolhost does not offer elicitation to MCP servers: no person is asked on a server’s behalf',
};

export class ServerStdioTransport implements Transport {
  readonly #stdin: Writable;
  readonly #stdout: Readable;
  readonly dropped: DroppedOutput = { garbageLines: 0, oversizedLines: 0 };
  #chunks: Buffer[] = [];
  #bytes = 0;
  /** The current line went over the bound: the rest of it is skipped. */
  #skipping = false;
  #closed = false;
  /** Messages read and not yet handed to the client (see #deliver). */
  #pending: JSONRPCMessage[] = [];
  /** The two ends of a line over the bound, while the rest of it is skipped. */
  #oversizedHead: Buffer = EMPTY;
  #oversizedTail: Buffer = EMPTY;
  /** The ids of the requests sent and not yet answered. */
  readonly #inFlight = new Set<string | number>();
  #delivering = false;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  constructor(stdin: Writable, stdout: Readable) {
    this.#stdin = stdin;
    this.#stdout = stdout;
  }

  /** The server's stdout closed, or the transport was closed. */
  get closed(): boolean {
    return this.#closed;
  }

  async start(): Promise<void> {
    this.#stdout.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#stdout.once('close', () => void this.close());
    this.#stdout.on('error', () => {});
    this.#stdin.on('error', () => {});
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || this.#stdin.destroyed) throw new Error('the MCP server is gone');
    if ('method' in message && 'id' in message) this.#inFlight.add(message.id);
    // A request given up (timed out, aborted) waits for no answer: its id is forgotten, so the set
    // holds only requests still waiting, however many time out over a server's life.
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') this.#inFlight.delete(requestId);
    }
    const line = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve, reject) => {
      this.#stdin.write(line, (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#chunks = [];
    this.#stdin.destroy();
    this.#stdout.destroy();
    try {
      this.onclose?.();
    } catch {
      // The client's own listener: nothing of the server's reaches here.
    }
  }

  #read(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length && !this.#closed) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.#endLine();
      start = newline + 1;
    }
  }

  #take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#skipping) {
      this.#oversizedTail = Buffer.concat([this.#oversizedTail, part]).subarray(-EDGE_BYTES);
      return;
    }
    if (this.#bytes + part.length > MAX_MESSAGE_BYTES) {
      // Only the line's two ends are kept: where a reply's id is (first, or last as the SDKs write it).
      const head = (this.#chunks[0] ?? part).subarray(0, EDGE_BYTES);
      this.#oversizedHead = Buffer.from(head);
      this.#oversizedTail = Buffer.from(part.subarray(-EDGE_BYTES));
      this.#skipping = true;
      this.#chunks = [];
      this.#bytes = 0;
      this.dropped.oversizedLines += 1;
      return;
    }
    this.#chunks.push(part);
    this.#bytes += part.length;
  }

  #endLine(): void {
    const line = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const skipped = this.#skipping;
    this.#chunks = [];
    this.#bytes = 0;
    this.#skipping = false;
    const parsed: ParsedLine = skipped
      ? {
          ...oversizedId(this.#oversizedHead, this.#oversizedTail),
          problem: `a reply over the ${MAX_MESSAGE_BYTES / (1024 * 1024)} MiB bound`,
        }
      : line.length === 0
        ? {}
        : parseLine(line.toString('utf8'));
    if (skipped || line.length === 0) {
      this.#oversizedHead = EMPTY;
      this.#oversizedTail = EMPTY;
      if (parsed.id === undefined) return;
    }
    let message = parsed.message;
    if (message === undefined) {
      if (!skipped) this.dropped.garbageLines += 1;
      // A reply to a request in flight that is no JSON-RPC message: its request is answered now
      // with why, rather than waiting for its timeout.
      if (parsed.id === undefined || !this.#inFlight.has(parsed.id)) return;
      message = {
        jsonrpc: '2.0',
        id: parsed.id,
        error: {
          code: MALFORMED_REPLY_CODE,
          message: `the MCP server sent a malformed reply: ${parsed.problem}`,
        },
      };
    }
    if (!('method' in message) && 'id' in message) {
      // Answered now: a second reply with this id is one to an unknown request.
      const { id } = message;
      if (id !== null && id !== undefined) this.#inFlight.delete(id);
    }
    if (this.#refused(message)) return;
    this.#pending.push(message);
    if (!this.#delivering) this.#deliver();
  }

  /**
   * Hands the client its messages in order. The client runs a notification's handler a microtask
   * after it gets it, and a response at once: a call's last progress notification, sent just before
   * its result, would reach no one. So after a notification the next message waits a microtask.
   */
  #deliver(): void {
    this.#delivering = true;
    while (this.#pending.length > 0 && !this.#closed) {
      const message = this.#pending.shift() as JSONRPCMessage;
      try {
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
      if ('method' in message && !('id' in message)) {
        // Lines read meanwhile wait in #pending until this runs.
        queueMicrotask(() => this.#deliver());
        return;
      }
    }
    this.#delivering = false;
  }

  /** Answers a request the host does not serve; true when it was one. */
  #refused(message: JSONRPCMessage): boolean {
    if (!('method' in message) || !('id' in message)) return false;
    const why = Object.hasOwn(REFUSED_REQUESTS, message.method)
      ? REFUSED_REQUESTS[message.method]
      : undefined;
    if (why === undefined) return false;
    void this.send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: why } }).catch(() => {});
    return true;
  }
}

const EMPTY = Buffer.alloc(0);
/** How much of each end of a line over the bound is kept to find its id. */
const EDGE_BYTES = 256;
const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")/;
const ID_AT_END = /"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")\s*\}\s*$/;

/** The id a line over the bound names at its start or its end, if it names one there. */
function oversizedId(head: Buffer, tail: Buffer): { id?: string | number } {
  const found = ID_AT_START.exec(head.toString('utf8'))?.[1] ?? ID_AT_END.exec(tail.toString('utf8'))?.[1];
  if (found === undefined) return {};
  return { id: found.startsWith('"') ? found.slice(1, -1) : Number(found) };
}

/** A line read: the message it is, or why not and the request id it names (if it names one). */
interface ParsedLine {
  message?: JSONRPCMessage;
  id?: string | number;
  problem?: string;
}

/** A line as a JSON-RPC message, or why not (not JSON, too deep, not JSON-RPC). */
function parseLine(text: string): ParsedLine {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return { problem: 'not JSON' };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return { problem: 'not JSON' };
  }
  const rawId: unknown =
    typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  const id = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : undefined;
  if (nestedDeeperThan(trimmed, MAX_MESSAGE_DEPTH)) {
    return { ...(id === undefined ? {} : { id }), problem: `nested deeper than ${MAX_MESSAGE_DEPTH} levels` };
  }
  try {
    return { message: parseJSONRPCMessage(value) };
  } catch {
    return { ...(id === undefined ? {} : { id }), problem: 'not a JSON-RPC response' };
  }
}

/** Whether the JSON text nests objects and arrays deeper than `limit` (strings skipped). */
function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (inString) {
      if (unit === 0x5c) index++;
      else if (unit === 0x22) inString = false;
    } else if (unit === 0x22) inString = true;
    else if (unit === 0x7b || unit === 0x5b) {
      depth++;
      if (depth > limit) return true;
    } else if (unit === 0x7d || unit === 0x5d) depth--;
  }
  return false;
}
