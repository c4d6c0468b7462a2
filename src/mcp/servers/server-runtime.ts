/**
 * One server entry over its life: started in its sandbox, its tools read and checked, restarted
 * with backoff when it ends (left out once it keeps dying), its tools read again when it says they
 * changed (at most once per {@link RELIST_INTERVAL_MS}), and every call relayed with its deadline.
 * `onChange` hears every change of what it offers; the server set publishes it.
 */
import type { LeftOutCode } from '../../boundary/errors.js';
import { escapeControl, truncate } from '../../boundary/sanitize.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';
import { replyOfResult } from './call-result.js';
import type { ServerEntry } from './config.js';
import { type CallHooks, type ServerConnection, stderrWords } from './connection.js';
import { type ServerSettings, startServer } from './server-start.js';
import { type CheckedServerTool, checkServerTool } from './tool-check.js';

/** How often a server may end before it is left out: this many ends within {@link DEATH_WINDOW_MS}. */
const MAX_DEATHS = 5;
const DEATH_WINDOW_MS = 10 * 60_000;
/** The first restart's delay; each next one doubles, up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 10_000;
/** Tools are read again at most this often after `list_changed`. */
export const RELIST_INTERVAL_MS = 1000;

export type RuntimeState =
  | { kind: 'starting' }
  | { kind: 'ready'; connection: ServerConnection; tools: CheckedServerTool[] }
  | { kind: 'restarting' }
  | { kind: 'left-out'; code: LeftOutCode; reason: string };

export class ServerRuntime {
  readonly entry: ServerEntry;
  readonly #settings: ServerSettings;
  readonly #onChange: () => void;
  #state: RuntimeState = { kind: 'starting' };
  /** Who waits for the server to be ready (calls during a restart). */
  #waiters: Array<() => void> = [];
  readonly #deaths: number[] = [];
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #listed = '';
  #relisting = false;
  #relistAgain = false;
  #lastListAt = 0;
  readonly #inFlight = new Set<Promise<PoolReply>>();

  constructor(entry: ServerEntry, settings: ServerSettings, onChange: () => void) {
    this.entry = entry;
    this.#settings = settings;
    this.#onChange = onChange;
  }

  get state(): RuntimeState {
    return this.#state;
  }

  /** Starts the server and reads its tools; never rejects (a failure leaves it out, with its reason). */
  async start(): Promise<void> {
    const first = this.#state.kind === 'starting';
    const started = await startServer(this.entry, this.#settings);
    if (first && !started.ok && started.code === 'DECLARATION_TIMEOUT') this.#scheduleRead();
    if (this.#closed) {
      if (started.ok) started.connection.close();
      return;
    }
    if (!started.ok) {
      this.#state = { kind: 'left-out', code: started.code, reason: started.reason };
      this.#wake();
      // Its tools were offered (it is being restarted): they are not any more.
      if (this.#listed !== '') {
        this.#listed = '';
        this.#onChange();
      }
      return;
    }
    const { connection, tools } = started;
    const listed = JSON.stringify(tools);
    const changed = listed !== this.#listed;
    this.#listed = listed;
    this.#lastListAt = Date.now();
    this.#state = { kind: 'ready', connection, tools: this.#check(tools) };
    connection.onToolsChanged = () => this.#relist(connection);
    void connection.ended.then(() => this.#ended(connection));
    this.#wake();
    if (changed) this.#onChange();
  }

  /** Relays one call; resolves with exactly one reply, whatever the server does. */
  call(
    toolName: string,
    args: unknown,
    hooks: Omit<CallHooks, 'signal'> & { signal?: AbortSignal },
  ): Promise<PoolReply> {
    const running = this.#call(toolName, args, hooks);
    this.#inFlight.add(running);
    void running.finally(() => this.#inFlight.delete(running));
    return running;
  }

  /** Waits for the calls in flight, then ends the server. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
    this.close();
  }

  /** Ends the server now; calls in flight answer as the server ends. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    if (this.#state.kind === 'ready') this.#state.connection.close();
    this.#wake();
  }

  async #call(
    toolName: string,
    args: unknown,
    hooks: Omit<CallHooks, 'signal'> & { signal?: AbortSignal },
  ): Promise<PoolReply> {
    const deadline = Date.now() + hooks.timeoutMs;
    const connection = await this.#ready(deadline, hooks.signal);
    if (typeof connection === 'object' && 'ok' in connection) return connection;
    const controller = new AbortController();
    const timedOut = new Error('timed out');
    const timer = setTimeout(() => controller.abort(timedOut), Math.max(1, deadline - Date.now()));
    const onAbort = () => controller.abort(hooks.signal?.reason);
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await connection.callTool(toolName, args, { ...hooks, signal: controller.signal });
      return replyOfResult(result, this.#settings.maxResultBytes);
    } catch (error) {
      if (controller.signal.reason === timedOut) {
        this.#checkAfterTimeout(connection);
        return failure('TOOL_TIMEOUT', `tool timed out after ${hooks.timeoutMs} ms`);
      }
      if (hooks.signal?.aborted === true)
        return failure('CALL_ABORTED', 'the call was aborted by its caller');
      if (connection.disconnected) {
        const exit = await connection.end();
        const code = exit.outOfMemory ? 'TOOL_OUT_OF_MEMORY' : 'TOOL_CRASHED';
        return failure(
          code,
          `the MCP server ${this.entry.name} ${exit.description} during the call${stderrWords(connection.stderrTail)}`,
        );
      }
      const message = escapeControl(truncate(error instanceof Error ? error.message : String(error), 2000));
      return failure('TOOL_THREW', `the MCP server ${this.entry.name} answered with an error: ${message}`);
    } finally {
      clearTimeout(timer);
      hooks.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The connection to call on, waiting through a restart until `deadline`; or the reply that ends the call. */
  async #ready(deadline: number, signal: AbortSignal | undefined): Promise<ServerConnection | PoolReply> {
    while (!this.#closed) {
      const state = this.#state;
      if (state.kind === 'ready') return state.connection;
      if (state.kind === 'left-out') {
        return failure('TOOL_CRASHED', `the MCP server ${this.entry.name} is not running: ${state.reason}`);
      }
      if (signal?.aborted === true) return failure('CALL_ABORTED', 'the call was aborted by its caller');
      const left = deadline - Date.now();
      if (left <= 0)
        return failure(
          'TOOL_TIMEOUT',
          `the MCP server ${this.entry.name} was restarting until the call's timeout`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return failure('HOST_CLOSED', 'the tool host is closed');
  }

  /** After a call's timeout the server got `notifications/cancelled`; one that then doesn't answer a ping within the grace is restarted. */
  #checkAfterTimeout(connection: ServerConnection): void {
    void connection.answers(this.#settings.timeoutGraceMs).then((answers) => {
      if (!answers && this.#state.kind === 'ready' && this.#state.connection === connection)
        connection.close();
    });
  }

  #ended(connection: ServerConnection): void {
    if (this.#closed || this.#state.kind !== 'ready' || this.#state.connection !== connection) return;
    const now = Date.now();
    this.#deaths.push(now);
    while ((this.#deaths[0] ?? now) < now - DEATH_WINDOW_MS) this.#deaths.shift();
    const exit = connection.exit;
    const how = `${exit?.description ?? 'ended'}${stderrWords(connection.stderrTail)}`;
    if (this.#deaths.length >= MAX_DEATHS) {
      this.#state = {
        kind: 'left-out',
        code: 'SERVER_FAILED',
        reason: `it ended ${this.#deaths.length} times within ${DEATH_WINDOW_MS / 60_000} minutes (last: it ${how}); toolhost stopped restarting it (load the config again to retry)`,
      };
      this.#settings.logger.warn(`MCP server ${this.entry.name}: ${this.#state.reason}`);
      this.#wake();
      this.#onChange();
      return;
    }
    this.#state = { kind: 'restarting' };
    const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.#deaths.length - 1));
    this.#timer = setTimeout(() => void this.start(), delay);
    this.#timer.unref();
  }

  /** A read that ran over its time bound is tried again after each of the host's re-read delays. */
  #scheduleRead(attempt = 0): void {
    const delay = this.#settings.rereadDelaysMs[attempt];
    if (delay === undefined || this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.start().then(() => {
        const state = this.#state;
        if (state.kind === 'left-out' && state.code === 'DECLARATION_TIMEOUT')
          this.#scheduleRead(attempt + 1);
      });
    }, delay);
    this.#timer.unref();
  }

  /** `list_changed`: the tools are read again on the same connection, at most once per interval. */
  #relist(connection: ServerConnection): void {
    if (this.#relisting) {
      this.#relistAgain = true;
      return;
    }
    this.#relisting = true;
    const wait = Math.max(0, this.#lastListAt + RELIST_INTERVAL_MS - Date.now());
    this.#timer = setTimeout(async () => {
      this.#lastListAt = Date.now();
      const tools = await connection
        .listTools({ ...this.#settings.listBounds, timeoutMs: this.#settings.readTimeoutMs })
        .catch(() => undefined);
      this.#relisting = false;
      const state = this.#state;
      if (this.#closed || state.kind !== 'ready' || state.connection !== connection) return;
      if (tools !== undefined && JSON.stringify(tools) !== this.#listed) {
        this.#listed = JSON.stringify(tools);
        this.#state = { kind: 'ready', connection, tools: this.#check(tools) };
        this.#onChange();
      }
      if (this.#relistAgain) {
        this.#relistAgain = false;
        this.#relist(connection);
      }
    }, wait);
    this.#timer.unref();
  }

  #check(tools: unknown[]): CheckedServerTool[] {
    const settings = {
      prefix: this.entry.prefix,
      timeoutMs: this.entry.timeoutMs ?? this.#settings.defaultTimeoutMs,
      schemaLimits: this.#settings.schemaLimits,
    };
    return tools.map((tool) => checkServerTool(tool, settings));
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
