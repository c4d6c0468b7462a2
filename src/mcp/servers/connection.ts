/**
 * One running server and the official v2 client connected to it over {@link ServerStdioTransport}:
 * `initialize` under a time bound, `tools/list` page by page under bounds on time, pages and tools,
 * `tools/call` with the caller's deadline (an abort sends `notifications/cancelled`), `roots/list`
 * answered with the server's grants. Every way the server ends (exits, is killed, is closed) ends
 * its requests in flight with an error.
 */
import { pathToFileURL } from 'node:url';
import { Client, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { escapeControl, truncate } from '../../boundary/sanitize.js';
import type { JsonValue } from '../../boundary/tool-contract.js';
import { packageVersion } from '../../cli/package-version.js';
import type { PackageEgress } from '../../process/network/egress.js';
import { EgressCalls } from './egress-calls.js';
import { type ServerExit, ServerProcess, type ServerProcessOptions } from './server-process.js';
import { ServerStdioTransport } from './stdio-transport.js';

export interface ListBounds {
  timeoutMs: number;
  maxPages: number;
  maxTools: number;
}

export interface CallHooks {
  timeoutMs: number;
  signal: AbortSignal;
  onProgress: (data: JsonValue) => void;
}

/**
 * A result schema that takes any value as it is: a call's result is checked by the host, which
 * answers a malformed one `TOOL_BAD_RESULT` in one line, rather than by the client's own schema.
 */
const ANY_RESULT: StandardSchemaV1<unknown, unknown> = {
  '~standard': { version: 1, vendor: 'toolhost', validate: (value: unknown) => ({ value }) },
};

/** How long a server whose stdout closed has to end by itself before it is ended. */
const END_GRACE_MS = 2000;

/** Longer than any deadline the host sets itself (Node's timers take at most 2^31 - 1 ms). */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;

export class ServerConnection {
  readonly #process: ServerProcess;
  readonly #transport: ServerStdioTransport;
  readonly #client: Client;
  /** The server's calls as its egress proxy charges them (a server without network has none). */
  readonly #egress: EgressCalls | undefined;
  /** Resolves once, when the server's process has ended. */
  readonly ended: Promise<ServerExit>;
  #exit: ServerExit | undefined;
  /** The server said its tools changed (`notifications/tools/list_changed`). */
  onToolsChanged: (() => void) | undefined;
  /** A log message the server sent (`notifications/message`), as one bounded line. */
  onLog: ((line: string) => void) | undefined;

  private constructor(process: ServerProcess, roots: readonly string[], egress: PackageEgress | undefined) {
    this.#process = process;
    const calls = egress === undefined ? undefined : new EgressCalls(egress);
    this.#egress = calls;
    this.#transport = new ServerStdioTransport(process.stdin, process.stdout);
    this.#client = new Client(
      { name: 'toolhost', version: packageVersion() },
      { capabilities: { roots: { listChanged: false } } },
    );
    // The server's own doing never throws into the host: the client reports it here.
    this.#client.onerror = () => {};
    const listed = roots.map((path) => ({ uri: pathToFileURL(path).href, name: path }));
    this.#client.setRequestHandler('roots/list', () => ({ roots: listed.map((root) => ({ ...root })) }));
    this.#client.setNotificationHandler('notifications/tools/list_changed', () => {
      try {
        this.onToolsChanged?.();
      } catch {
        // The listener is the host's: a throw there must not reach the client.
      }
    });
    this.#client.setNotificationHandler('notifications/message', (notification) => {
      try {
        this.onLog?.(logLine(notification.params));
      } catch {
        // As above: the host's listener.
      }
    });
    this.ended = process.exited.then(async (exit) => {
      this.#exit = exit;
      void this.#transport.close();
      // Its proxy ends with it (a restart gets a new one, and new placeholders): ended is all gone.
      await calls?.close();
      return exit;
    });
  }

  /**
   * Starts the server and runs `initialize` within `timeoutMs`. Rejects with a reason (the
   * server's last stderr words included) when it does not get that far; the process is ended then.
   */
  static async open(
    options: ServerProcessOptions & { roots: readonly string[]; egress?: PackageEgress | undefined },
    timeoutMs: number,
  ): Promise<ServerConnection> {
    const process = await ServerProcess.start(options);
    const connection = new ServerConnection(process, options.roots, options.egress);
    try {
      await connection.#bounded(
        (signal) => connection.#client.connect(connection.#transport, { signal, timeout: NO_SDK_TIMEOUT }),
        timeoutMs,
        `did not answer initialize within ${timeoutMs} ms`,
      );
    } catch (error) {
      // Ended before it is left out: its place in the worker budget comes back only then.
      connection.close();
      await connection.ended;
      throw error;
    }
    return connection;
  }

  /** The server's stdout closed (it ended, or closed it): nothing more will come from it. */
  get disconnected(): boolean {
    return this.#transport.closed;
  }

  /**
   * How the process ended, once it has: a server that closed its stdout but runs on is given
   * {@link END_GRACE_MS} to end by itself, then ended.
   */
  async end(): Promise<ServerExit> {
    if (this.#exit !== undefined) return this.#exit;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), END_GRACE_MS);
    });
    const exit = await Promise.race([this.ended, grace]);
    clearTimeout(timer);
    if (exit !== undefined) return exit;
    this.close();
    return this.ended;
  }

  /** How the process ended; undefined while it runs. */
  get exit(): ServerExit | undefined {
    return this.#exit;
  }

  get stderrTail(): string {
    return this.#process.stderrTail;
  }

  get pid(): number | undefined {
    return this.#process.pid;
  }

  /** What the transport dropped of the server's stdout. */
  get dropped(): ServerStdioTransport['dropped'] {
    return this.#transport.dropped;
  }

  /** Every page of `tools/list`, within the bounds; rejects with the bound it broke. */
  async listTools(bounds: ListBounds): Promise<unknown[]> {
    return this.#bounded(
      async (signal) => {
        const tools: unknown[] = [];
        let cursor: string | undefined;
        for (let page = 1; ; page++) {
          // Page by page here, not the client's listTools: that one reads every page itself before
          // answering (so no bound here would hold until all were in memory), caches the list, and
          // says on the host's stdout when a server lacks the tools capability.
          const answer = await this.#client.request(
            { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
            ANY_RESULT,
            { signal, timeout: NO_SDK_TIMEOUT },
          );
          const result =
            typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : {};
          const listed: unknown = Object.hasOwn(result, 'tools') ? result['tools'] : undefined;
          if (!Array.isArray(listed)) throw new Error('its tools/list result has no list of tools');
          if (tools.length + listed.length > bounds.maxTools) {
            throw new Error(`it lists more than ${bounds.maxTools} tools (toolhost reads at most that many)`);
          }
          for (const tool of listed) tools.push(tool);
          const next: unknown = Object.hasOwn(result, 'nextCursor') ? result['nextCursor'] : undefined;
          if (typeof next !== 'string' || next === '') return tools;
          if (page >= bounds.maxPages) {
            throw new Error(`its tools/list runs over more than ${bounds.maxPages} pages`);
          }
          cursor = next;
        }
      },
      bounds.timeoutMs,
      `did not list its tools within ${bounds.timeoutMs} ms`,
    );
  }

  /**
   * One `tools/call`: resolves with the server's result as it came (the host checks its shape, see
   * call-result.ts), rejects on an error reply, an abort or the server's end.
   */
  callTool(name: string, args: unknown, hooks: CallHooks): Promise<unknown> {
    const egress = this.#egress;
    if (egress === undefined) return this.#request(name, args, hooks);
    return egress.run(hooks.signal, (signal) => this.#request(name, args, { ...hooks, signal }));
  }

  #request(name: string, args: unknown, hooks: CallHooks): Promise<unknown> {
    return this.#client.request(
      { method: 'tools/call', params: { name, arguments: args as Record<string, unknown> } },
      ANY_RESULT,
      {
        signal: hooks.signal,
        timeout: NO_SDK_TIMEOUT,
        onprogress: (progress) => {
          const data: JsonValue = { progress: progress.progress };
          if (typeof progress.total === 'number') data['total'] = progress.total;
          if (typeof progress.message === 'string') data['message'] = progress.message;
          hooks.onProgress(data);
        },
      },
    );
  }

  /** Whether the server answers a `ping` within `timeoutMs`. */
  async answers(timeoutMs: number): Promise<boolean> {
    try {
      await this.#bounded((signal) => this.#client.ping({ signal, timeout: NO_SDK_TIMEOUT }), timeoutMs, '');
      return true;
    } catch {
      return false;
    }
  }

  /** Ends the server and everything it started. */
  close(): void {
    this.#process.kill();
    void this.#transport.close();
  }

  /** `work` under a deadline and the server's end: whichever comes first. */
  async #bounded<T>(
    work: (signal: AbortSignal) => Promise<T>,
    timeoutMs: number,
    overMessage: string,
  ): Promise<T> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const over = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(overMessage);
        error.name = 'TimeoutError';
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    const ended = this.ended.then((exit): never => {
      throw new Error(`${exit.description}${stderrWords(this.#process.stderrTail)}`);
    });
    try {
      return await Promise.race([work(controller.signal), over, ended]);
    } catch (error) {
      // The client may hear the server's stdout close before its exit is known: the reason is how
      // it ended and its last words, not "connection closed".
      if (!this.disconnected || (error instanceof Error && error.name === 'TimeoutError')) throw error;
      const exit = await this.end();
      throw new Error(`${exit.description}${stderrWords(this.#process.stderrTail)}`);
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }
}

/** A server's log message as one line: `[level] logger: data`, without control characters, bounded. */
function logLine(params: { level?: unknown; logger?: unknown; data?: unknown }): string {
  const data = typeof params.data === 'string' ? params.data : (JSON.stringify(params.data) ?? '');
  const logger = typeof params.logger === 'string' ? `${params.logger}: ` : '';
  return `${escapeControl(truncate(`[${String(params.level)}] ${logger}${data}`, 2000))}\n`;
}

/** The server's last stderr line(s), as a clause for an error message. */
export function stderrWords(tail: string): string {
  const lines = tail.trim().split('\n').slice(-5).join(' | ').trim();
  if (lines === '') return '';
  return `; its stderr ends: ${escapeControl(lines.slice(-500))}`;
}
