/**
 * The channel between `toolhost serve` (stdio) and the process that hosts the tools: JSON-RPC
 * messages, one per line, on a pipe that is neither process's stdout.
 *
 * The hosting process holds its end of this pipe as an open file descriptor, and a tool in it can
 * write there (`fs.writeSync(3, …)`; the strict tier doesn't stop writes to descriptors already open).
 * So what comes from it is untrusted until checked: every line it sends is signed with a key the
 * relay handed it before any tool loaded (HMAC-SHA256, `<64 hex> <json>`), and the relay passes on
 * only lines whose signature holds and whose JSON is a JSON-RPC message. A tool can still garble a
 * line (then that line is dropped), but it can't make one up without the key. What the relay sends
 * the other way is the client's own messages, as plain lines.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { asJsonRpcMessage } from './json-rpc.js';

/** Hex characters of a line's signature, then one space, then the message. */
const SIGNATURE_CHARS = 64;
const SIGNED_START = /[0-9a-f]{64} \{/g;

/** A line for the relay: the message's JSON, signed with `key`. */
export function signedLine(key: Buffer, message: JSONRPCMessage): string {
  const json = JSON.stringify(message);
  return `${sign(key, json)} ${json}\n`;
}

function sign(key: Buffer, json: string): string {
  return createHmac('sha256', key).update(json).digest('hex');
}

/**
 * Places after the first where a line's signed message is looked for. Each try hashes the rest of
 * the line, so without a bound a tool's long line full of would-be signatures cost the relay time
 * that grows with its square (a 1 MB line held it for 5 s); past the bound the line is garbled.
 */
const MAX_LATER_STARTS = 8;

/** A signed line's message, and its JSON as signed (what the relay passes on, not re-serialized). */
export interface SignedMessage {
  message: JSONRPCMessage;
  json: string;
}

/**
 * The message a signed line holds, or `undefined`. A tool's bytes written just before a real line
 * would otherwise cost that line, so when the line as a whole fails, the next few places where a
 * signed line could start are tried (only then: the common case costs one HMAC).
 */
export function readSignedLine(key: Buffer, line: string): SignedMessage | undefined {
  const whole = verified(key, line, 0);
  if (whole !== undefined) return whole;
  SIGNED_START.lastIndex = 1;
  let tries = 0;
  for (let match = SIGNED_START.exec(line); match !== null; match = SIGNED_START.exec(line)) {
    const found = verified(key, line, match.index);
    if (found !== undefined) return found;
    tries += 1;
    if (tries === MAX_LATER_STARTS) return undefined;
    SIGNED_START.lastIndex = match.index + 1;
  }
  return undefined;
}

function verified(key: Buffer, line: string, start: number): SignedMessage | undefined {
  if (line.charCodeAt(start + SIGNATURE_CHARS) !== 0x20) return undefined;
  const signature = Buffer.from(line.slice(start, start + SIGNATURE_CHARS), 'hex');
  if (signature.length !== SIGNATURE_CHARS / 2) return undefined;
  const json = line.slice(start + SIGNATURE_CHARS + 1);
  if (!timingSafeEqual(signature, Buffer.from(sign(key, json), 'hex'))) return undefined;
  const message = parseMessage(json);
  return message === undefined ? undefined : { message, json };
}

/** A JSON-RPC message from one line of JSON (see json-rpc.ts), or `undefined` for anything else. */
export function parseMessage(json: string): JSONRPCMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  return asJsonRpcMessage(value);
}

/**
 * Splits a byte stream into lines. A line longer than `maxLineBytes` is dropped whole (up to its
 * newline), so a writer that never ends a line can't make the reader hold unbounded memory.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #onLine: (line: string) => void;
  readonly #onDropped: (bytes: number) => void;
  #chunks: Buffer[] = [];
  #held = 0;
  /** Bytes of an over-long line dropped so far; its rest is dropped up to the next newline. */
  #dropping = 0;

  constructor(options: { maxLineBytes: number; onLine(line: string): void; onDropped(bytes: number): void }) {
    this.#maxLineBytes = options.maxLineBytes;
    this.#onLine = options.onLine;
    this.#onDropped = options.onDropped;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.#dropping > 0) {
        this.#onDropped(this.#dropping + piece.length + 1);
        this.#dropping = 0;
        continue;
      }
      const bytes = this.#chunks.length === 0 ? piece : Buffer.concat([...this.#chunks, piece]);
      this.#chunks = [];
      this.#held = 0;
      this.#onLine(bytes.toString('utf8').replace(/\r$/, ''));
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    if (this.#dropping > 0) {
      this.#dropping += rest.length;
    } else if (this.#held + rest.length > this.#maxLineBytes) {
      this.#dropping = this.#held + rest.length;
      this.#chunks = [];
      this.#held = 0;
    } else {
      this.#chunks.push(rest);
      this.#held += rest.length;
    }
  }
}
