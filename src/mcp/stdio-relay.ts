/**
 * `toolhost serve` over stdio keeps its own stdout for the protocol and nothing else. The tools run in
 * another process (the hosting process: the ToolHost and the MCP server), whose stdout and stdin are
 * /dev/null and whose stderr is this process's; the two speak over an extra pipe (see channel.ts).
 * This process only relays: the client's messages to the hosting process, and back only signed
 * JSON-RPC messages that answer what the client asked (a response to a request still open, progress
 * for a token the client sent) or that a server may send unasked (`list_changed`, log messages). So
 * whatever a tool writes, by whatever means it reaches in its own process, the client's stdout
 * carries protocol messages only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Duplex, Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type JSONRPCMessage, ProtocolErrorCode, type RequestId } from '@modelcontextprotocol/server';
import { LineSplitter, parseMessage, readSignedLine } from './channel.js';
import { type ChannelGreeting, HEARS_SIGNALS_METHOD, MAX_CHANNEL_LINE_BYTES } from './channel-transport.js';
import { kindOf } from './json-rpc.js';

/** Notifications a server may send without being asked; anything else unasked is dropped. */
const UNASKED_NOTIFICATIONS = new Set([
  'notifications/tools/list_changed',
  'notifications/message',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
  // A 2026-07-28 client's `subscriptions/listen` stream: its acknowledgement comes before any change.
  'notifications/subscriptions/acknowledged',
]);

/** The longest line taken from the client: a request holds a tool's arguments, bounded as over HTTP. */
export const MAX_CLIENT_LINE_BYTES = 16 * 1024 * 1024;

/** How long the hosting process gets to end after it was asked to, before it is killed. */
const SHUTDOWN_GRACE_MS = 15_000;

export interface RelayOptions {
  /** The hosting process's entry module. */
  entry: URL;
  /** Sent to the hosting process with the key (its parsed command line). */
  settings: unknown;
  stdin: Readable;
  stdout: Writable;
  /** Told how many bytes from the hosting process were dropped so far, each time some are. */
  onDropped(bytes: number): void;
}

/** How the hosting process ended, and whether it was asked to. */
export interface RelayEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  requested: boolean;
}

/**
 * Runs the relay until the hosting process exits: it is asked to end (SIGTERM) when the client
 * closes stdin or when {@link StdioRelay.stop} is called (on SIGINT / SIGTERM).
 */
export class StdioRelay {
  readonly #options: RelayOptions;
  readonly #key = randomBytes(32);
  readonly #child: ChildProcess;
  readonly #channel: Duplex;
  readonly #stdout: Writable;
  /** The client's requests not yet answered, with the progress token each sent. */
  readonly #open = new Map<string, string | number | undefined>();
  #dropped = 0;
  #requested = false;
  /**
   * Whether the hosting process said it hears SIGTERM. Before that, a SIGTERM would end it the
   * default way (at once, silently: a mistake on its command line, found while loading, would go
   * unsaid and the exit code be 0), so a stop asked for meanwhile waits for it.
   */
  #hearsSignals = false;
  #termPending = false;
  readonly ended: Promise<RelayEnd>;

  constructor(options: RelayOptions) {
    this.#options = options;
    this.#child = spawn(process.execPath, [fileURLToPath(options.entry)], {
      // fd 3 is the channel; stdin and stdout are /dev/null, so nothing a tool writes to them (or
      // through a child process that inherits them) can reach the client.
      stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
      env: process.env,
    });
    const channel = this.#child.stdio[3];
    if (channel === null || channel === undefined || !('write' in channel)) {
      throw new Error('the hosting process has no channel');
    }
    this.#channel = channel as Duplex;
    this.#channel.on('error', () => {});
    const greeting: ChannelGreeting = { key: this.#key.toString('hex'), settings: options.settings };
    this.#channel.write(`${JSON.stringify(greeting)}\n`);

    const splitter = new LineSplitter({
      maxLineBytes: MAX_CHANNEL_LINE_BYTES,
      onLine: (line) => this.#fromHost(line),
      onDropped: (bytes) => this.#drop(bytes),
    });
    this.#channel.on('data', (chunk: Buffer) => splitter.push(chunk));

    // Lines read here, not by the SDK's stdio transport: that one stops writing once stdin ends,
    // and a client that closed stdin still gets an answer to every request it sent.
    this.#stdout = options.stdout;
    const fromClient = new LineSplitter({
      maxLineBytes: MAX_CLIENT_LINE_BYTES,
      onLine: (line) => {
        // A line that is not a JSON-RPC message is dropped, as the SDK's own reader does.
        const message = line === '' ? undefined : parseMessage(line);
        if (message !== undefined) this.#fromClient(message, line);
      },
      onDropped: () => {},
    });
    options.stdin.on('data', (chunk: Buffer | string) =>
      fromClient.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk),
    );
    options.stdin.on('error', () => {});
    options.stdout.on('error', () => {});
    const onInputEnd = () => this.stop();
    options.stdin.once('end', onInputEnd);
    options.stdin.once('close', onInputEnd);

    this.ended = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => {
        options.stdin.off('end', onInputEnd);
        options.stdin.off('close', onInputEnd);
        // Nothing is lost: a request the hosting process did not answer gets an error either way.
        this.#answerOpen(
          this.#requested
            ? 'the tool host shut down before answering'
            : 'the tool host process ended unexpectedly',
        );
        resolve({ code, signal, requested: this.#requested });
      });
    });
  }

  /** Asks the hosting process to end (running calls are answered first); resolves when it has. */
  async stop(): Promise<RelayEnd> {
    if (!this.#requested && this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#requested = true;
      if (this.#hearsSignals) this.#child.kill('SIGTERM');
      else this.#termPending = true;
      const force = setTimeout(() => this.#child.kill('SIGKILL'), SHUTDOWN_GRACE_MS);
      void this.ended.finally(() => clearTimeout(force));
    }
    return this.ended;
  }

  /**
   * Passes the client's line on as it came (it was just checked to be a JSON-RPC message, and the
   * hosting process parses it again), noting the requests it opens and the ones it cancels.
   */
  #fromClient(message: JSONRPCMessage, line: string): void {
    const kind = kindOf(message);
    if (kind === 'request' && 'id' in message && 'method' in message) {
      const token = message.params?._meta?.progressToken;
      this.#open.set(idKey(message.id), token);
    } else if (
      kind === 'notification' &&
      'method' in message &&
      message.method === 'notifications/cancelled'
    ) {
      // A cancelled request gets no answer (the spec): forget it, so a late one is not passed on.
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) this.#open.delete(idKey(id));
    }
    this.#channel.write(`${line}\n`);
  }

  #fromHost(line: string): void {
    const signed = readSignedLine(this.#key, line);
    const message = signed?.message;
    if (
      message !== undefined &&
      !this.#hearsSignals &&
      'method' in message &&
      message.method === HEARS_SIGNALS_METHOD
    ) {
      this.#hearsSignals = true;
      if (this.#termPending) this.#child.kill('SIGTERM');
      return;
    }
    if (signed === undefined || !this.#answersTheClient(signed.message)) {
      this.#drop(Buffer.byteLength(line) + 1);
      return;
    }
    // The JSON as signed and checked: one JSON-RPC message on one line, not serialized again.
    this.#write(signed.json);
  }

  #send(message: JSONRPCMessage): void {
    this.#write(JSON.stringify(message));
  }

  #write(json: string): void {
    if (this.#stdout.writable) this.#stdout.write(`${json}\n`);
  }

  #answersTheClient(message: JSONRPCMessage): boolean {
    const kind = kindOf(message);
    if (kind === 'result' || kind === 'error') {
      if (!('id' in message) || message.id === undefined) return false;
      return this.#open.delete(idKey(message.id));
    }
    if (kind === 'notification' && 'method' in message) {
      if (message.method !== 'notifications/progress') return UNASKED_NOTIFICATIONS.has(message.method);
      const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
      return token !== undefined && [...this.#open.values()].includes(token as string | number);
    }
    // The hosting process asks the client nothing.
    return false;
  }

  /** The hosting process died: every request still open gets an error rather than no answer. */
  #answerOpen(message: string): void {
    for (const id of this.#open.keys()) {
      const requestId: RequestId = id.startsWith('n:') ? Number(id.slice(2)) : id.slice(2);
      this.#send({
        jsonrpc: '2.0',
        id: requestId,
        error: { code: ProtocolErrorCode.InternalError, message },
      });
    }
    this.#open.clear();
  }

  #drop(bytes: number): void {
    this.#dropped += bytes;
    this.#options.onDropped(this.#dropped);
  }
}

/** A request id as a map key: `1` and `"1"` are different ids. */
function idKey(id: RequestId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`;
}
