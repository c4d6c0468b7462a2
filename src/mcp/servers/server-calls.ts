/**
 * The calls to one server entry: each waits for the server to be ready (through a restart, or the
 * check after a call's timeout) within its own timeout, is relayed (relay-call.ts) with the log
 * messages the server sends while it runs as its output, and gets exactly one reply. A server whose
 * call timed out takes no call until it answers a ping within the grace; one that doesn't is ended
 * (its runtime restarts it).
 */
import type { JsonValue } from '../../boundary/tool-contract.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';
import type { CallerSignal } from '../../calls/pool-call.js';
import { CallLogs } from './call-logs.js';
import type { ServerConnection } from './connection.js';
import { relayCall } from './relay-call.js';
import type { RuntimeState } from './server-runtime.js';
import type { ServerSettings } from './server-start.js';

export interface RuntimeCall {
  timeoutMs: number;
  signal?: CallerSignal | undefined;
  onProgress: (data: JsonValue) => void;
}

/** What the calls read of their server's runtime. */
export interface CallsRuntime {
  readonly serverName: string;
  readonly settings: Pick<ServerSettings, 'maxLogChars' | 'maxResultBytes' | 'memoryMb' | 'timeoutGraceMs'>;
  /** Where the server stands now. */
  state(): RuntimeState;
  /** The runtime was closed: calls waiting answer `HOST_CLOSED`. */
  closed(): boolean;
}

export class ServerCalls {
  readonly #runtime: CallsRuntime;
  /** Calls waiting for the server to be ready (a restart, a check after a timeout). */
  #waiters: Array<() => void> = [];
  readonly #inFlight = new Set<Promise<PoolReply>>();
  /** A connection whose call timed out, until it answers a ping (calls wait for that) or is ended. */
  #suspect: ServerConnection | undefined;
  /** The calls in flight that hear the server's log messages (each keeps its own, bounded). */
  readonly #logSinks = new Set<(line: string) => void>();

  constructor(runtime: CallsRuntime) {
    this.#runtime = runtime;
  }

  /** Relays one call; resolves with exactly one reply, whatever the server does. */
  call(toolName: string, args: unknown, call: RuntimeCall): Promise<PoolReply> {
    const running = this.#call(toolName, args, call);
    this.#inFlight.add(running);
    void running.finally(() => this.#inFlight.delete(running));
    return running;
  }

  /** Resolves once every call in flight now has answered. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }

  /** The server's state changed (ready, left out, closed): calls waiting look again. */
  wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** A log message the server sent: every call in flight hears it. */
  log(line: string): void {
    for (const sink of this.#logSinks) sink(line);
  }

  /** A connection ended: it is no longer waited on to answer its ping. */
  ended(connection: ServerConnection): void {
    if (this.#suspect === connection) this.#suspect = undefined;
  }

  async #call(toolName: string, args: unknown, call: RuntimeCall): Promise<PoolReply> {
    const deadline = Date.now() + call.timeoutMs;
    const connection = await this.#ready(deadline, call.signal);
    if (!('callTool' in connection)) return connection;
    const { settings, serverName } = this.#runtime;
    const logs = new CallLogs(settings.maxLogChars);
    const sink = (line: string) => logs.add(line);
    this.#logSinks.add(sink);
    const reply = await relayCall(connection, toolName, args, {
      serverName,
      deadline,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
      onProgress: call.onProgress,
      maxResultBytes: settings.maxResultBytes,
      memoryMb: settings.memoryMb,
      onTimeout: (timedOut) => this.#checkAfterTimeout(timedOut),
    }).finally(() => this.#logSinks.delete(sink));
    return logs.withReply(reply);
  }

  /** The connection to call on, waiting through a restart or a check until `deadline`; or the reply that ends the call. */
  async #ready(deadline: number, signal: CallerSignal | undefined): Promise<ServerConnection | PoolReply> {
    const { serverName } = this.#runtime;
    while (!this.#runtime.closed()) {
      const state = this.#runtime.state();
      if (state.kind === 'ready' && this.#suspect !== state.connection) return state.connection;
      if (state.kind === 'left-out') {
        return failure('TOOL_CRASHED', `the MCP server ${serverName} is not running: ${state.reason}`);
      }
      if (signal?.aborted === true) return failure('CALL_ABORTED', 'the call was aborted by its caller');
      const left = deadline - Date.now();
      if (left <= 0) {
        return failure(
          'TOOL_TIMEOUT',
          `the MCP server ${serverName} was not ready before the call's timeout`,
        );
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, left);
        signal?.addEventListener('abort', done, { once: true });
        this.#waiters.push(done);
      });
    }
    return failure('HOST_CLOSED', 'the tool host is closed');
  }

  /**
   * A call ran over its deadline (the server got `notifications/cancelled`): until the server answers
   * a ping, within the grace, it takes no call; one that doesn't is ended and restarted.
   */
  #checkAfterTimeout(connection: ServerConnection): void {
    if (this.#suspect === connection) return;
    this.#suspect = connection;
    void connection.answers(this.#runtime.settings.timeoutGraceMs).then((answers) => {
      // One that doesn't answer stays suspect until its end restarts it: calls wait for that.
      if (!answers) {
        connection.close();
        return;
      }
      if (this.#suspect === connection) this.#suspect = undefined;
      this.wake();
    });
  }
}
