/**
 * The MCP side of a ToolHost: MCP `Server`s (the SDK's low-level one: the set of tools changes
 * while it runs and the schemas are plain JSON Schema, which the high-level `McpServer` would want
 * as zod) whose `tools/list` is `host.list()` and whose `tools/call` is `host.call`. The SDK's
 * serving entries make one per connection (stdio) or per request (HTTP), for either protocol era;
 * all of them share this object's progress routing and offered-set tracking.
 */
import { randomUUID } from 'node:crypto';
import {
  type CallToolResult,
  type LoggingLevel,
  type McpRequestContext,
  ProtocolErrorCode,
  Server,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { ToolInfo } from '../declaration/check.js';
import type { CallOptions } from '../host/call-options.js';
import type { ToolHost } from '../host/tool-host.js';
import { toCallToolResult, toMcpTool } from './content.js';
import { answerEmptyLists, EMPTY_LIST_CAPABILITIES } from './empty-lists.js';
import { CallLog, type LogWish, levelOf } from './logging.js';
import { PlainCalls, type PlainCallsOptions } from './plain-calls.js';
import { takeHandedBack } from './plain-http.js';
import { ProgressRouter } from './progress.js';

/** A 2025-era connection's `logging/setLevel`, when it holds for the connection (stdio). */
interface ConnectionLogLevel {
  level: LoggingLevel | undefined;
}

/** The part of a ToolHost the MCP server uses. */
export type ServedHost = Pick<ToolHost, 'list' | 'call' | 'on' | 'off'>;

export interface ToolServerOptions {
  /** `serverInfo` in the `initialize` and `server/discover` answers. */
  name: string;
  version: string;
  /**
   * Whether 2025-era servers announce `tools.listChanged` and send
   * `notifications/tools/list_changed` unasked. Only a connection the server can speak on unasked
   * (stdio) can; stateless HTTP has no such channel. 2026-07-28 clients always may listen
   * (`subscriptions/listen`), over either transport.
   */
  listChanged: boolean;
  /**
   * Where a 2025-era client's `logging/setLevel` holds: its connection (stdio), or every later
   * request to the endpoint (stateless HTTP, where no request knows the one before it).
   */
  legacyLogScope: 'connection' | 'endpoint';
  /** Caps every call's timeout (the tool's own `timeoutMs` holds too). */
  callTimeoutMs?: number | undefined;
  /** Told when sending a notification failed (the client went away); never throws. */
  onError?: (error: Error) => void;
}

/**
 * Makes MCP servers that answer from one host, and keeps what they share: progress and log
 * routing, the offered set last announced, and the count of calls being answered (for a clean
 * shut-down).
 */
export class ToolServer {
  readonly #host: ServedHost;
  readonly #options: ToolServerOptions;
  readonly #progress: ProgressRouter;
  /**
   * One for every server made here: a Server builds a validator of its own otherwise (for
   * elicitation, which toolhost never asks for), and that was most of the cost of an HTTP request.
   */
  readonly #validator = new AjvJsonSchemaValidator();
  /** Servers that asked to hear of changes, and whether their client can be told yet. */
  readonly #listeners = new Map<Server, { ready: boolean }>();
  /** Told once per change of the offered set (the HTTP entry's `subscriptions/listen` streams). */
  readonly #changeListeners = new Set<() => void>();
  /** A 2025-era `logging/setLevel` on a stateless endpoint: it holds for every later request. */
  #endpointLevel: LoggingLevel | undefined;
  #offered: string;
  /** Calls being answered, so a shutdown can wait for their answers to be sent. */
  #running = 0;
  #idle: Array<() => void> = [];
  readonly #onModule = () => this.#checkOffered();

  constructor(host: ServedHost, options: ToolServerOptions) {
    this.#host = host;
    this.#options = options;
    this.#progress = new ProgressRouter(host);
    this.#offered = offeredKey(host.list());
    host.on('module', this.#onModule);
  }

  /**
   * A new MCP server answering from the host, for the era the serving entry names. The entry
   * connects it and closes it.
   */
  createServer(context: Pick<McpRequestContext, 'era'> = { era: 'legacy' }): Server {
    const modern = context.era === 'modern';
    const listChanged = modern || this.#options.listChanged;
    const server = this.#newServer(listChanged);
    const connection: ConnectionLogLevel = { level: undefined };
    server.setRequestHandler('logging/setLevel', (request) => {
      const { level } = request.params;
      if (this.#options.legacyLogScope === 'endpoint') this.#endpointLevel = level;
      else connection.level = level;
      return {};
    });
    answerEmptyLists(server);
    server.setRequestHandler('tools/list', () => ({ tools: sortedByName(this.#host.list()).map(toMcpTool) }));
    const plain = new PlainCalls(
      this.plainCalls(() => !modern && this.#legacyLevel(connection) !== undefined),
    );
    plain.install(server, context.era);
    this.#answerCalls(server, modern, connection, plain);
    if (listChanged) this.#announceChanges(server, modern);
    return server;
  }

  #newServer(listChanged: boolean): Server {
    return new Server(
      { name: this.#options.name, version: this.#options.version },
      {
        capabilities: { tools: { listChanged }, logging: {}, ...EMPTY_LIST_CAPABILITIES },
        jsonSchemaValidator: this.#validator,
        // The list can change at any moment (a package re-read, a watched folder), so it is not
        // to be kept; a client that wants to know listens for `list_changed` instead.
        cacheHints: {
          'tools/list': { ttlMs: 0, cacheScope: 'private' },
          'prompts/list': { ttlMs: 0, cacheScope: 'private' },
          'resources/list': { ttlMs: 0, cacheScope: 'private' },
          'resources/templates/list': { ttlMs: 0, cacheScope: 'private' },
        },
      },
    );
  }

  /**
   * What a plain-call path runs: a call of an offered tool while `logsWanted()` is false, with no
   * progress or log route (a 2026-07-28 request that wants log messages names a level in its
   * envelope, which no plain call has).
   */
  plainCalls(logsWanted: () => boolean = () => false): PlainCallsOptions {
    const noRoute = { sendProgress: undefined, logs: undefined };
    return {
      takes: (name) => !logsWanted() && this.#offers(name),
      call: (name, args, signal) => this.#call(name, args, signal, [], noRoute),
    };
  }

  /**
   * `tools/call`: the host's call, with its progress and its log lines sent as notifications. A call
   * the plain path ran and handed back is answered with what it settled to.
   */
  #answerCalls(
    server: Server,
    modern: boolean,
    connection: ConnectionLogLevel,
    plain: PlainCalls | undefined,
  ): void {
    server.setRequestHandler('tools/call', (request, ctx) => {
      const settled = plain?.takeSettled(ctx.mcpReq.id) ?? takeHandedBack(ctx.http?.req);
      if (settled !== undefined) {
        if ('error' in settled) throw settled.error;
        return settled.result;
      }
      // Every notification of a call is sent before its answer, on the same stream: the answer
      // waits for them (a stream's answer closes it, and a late one would be lost or reordered).
      const pending: Promise<unknown>[] = [];
      const notify = (notification: { method: string; params: Record<string, unknown> }) => {
        const sent = ctx.mcpReq
          .notify(notification as Parameters<typeof ctx.mcpReq.notify>[0])
          .catch((error: unknown) => this.#options.onError?.(asError(error)));
        pending.push(sent);
        return sent;
      };
      const progressToken = ctx.mcpReq._meta?.progressToken;
      const level = modern ? levelOf(ctx.mcpReq.envelope) : this.#legacyLevel(connection);
      return this.#call(request.params.name, request.params.arguments ?? {}, ctx.mcpReq.signal, pending, {
        sendProgress:
          progressToken === undefined
            ? undefined
            : (params) =>
                void notify({ method: 'notifications/progress', params: { progressToken, ...params } }),
        logs: level === undefined ? undefined : { level, send: notify },
      });
    });
  }

  /**
   * A 2025 client hears of changes once it said it is initialized; on a 2026-07-28 connection the
   * entry hands them to the client's `subscriptions/listen` streams, if any.
   */
  #announceChanges(server: Server, modern: boolean): void {
    const state = { ready: modern };
    this.#listeners.set(server, state);
    server.oninitialized = () => {
      state.ready = true;
    };
    server.onclose = () => this.#listeners.delete(server);
  }

  /** The log level a 2025-era client asked for, where it holds (its connection, or the endpoint). */
  #legacyLevel(connection: ConnectionLogLevel): LoggingLevel | undefined {
    return this.#options.legacyLogScope === 'endpoint' ? this.#endpointLevel : connection.level;
  }

  #offers(name: string): boolean {
    return this.#host.list().some((info) => info.name === name);
  }

  /** Whether a 2025-era client of a stateless endpoint asked for log messages. */
  legacyLogsWanted(): boolean {
    return this.#endpointLevel !== undefined;
  }

  /** Calls `listener` once per change of what `tools/list` answers; returns how to stop. */
  onOfferedChange(listener: () => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /** Resolves once no call is being answered (calls that start meanwhile are waited for too). */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops listening to the host. Servers it made stay as they are. */
  close(): void {
    this.#host.off('module', this.#onModule);
    this.#progress.close();
    this.#listeners.clear();
    this.#changeListeners.clear();
  }

  async #call(
    name: string,
    args: unknown,
    signal: AbortSignal,
    pending: Promise<unknown>[],
    route: {
      sendProgress: ((params: { progress: number; total?: number; message?: string }) => void) | undefined;
      logs: LogWish | undefined;
    },
  ): Promise<CallToolResult> {
    // The spec lists an unknown tool among protocol errors (-32602), beside malformed requests;
    // invalid arguments are a tool execution error the model can correct (isError, below).
    if (!this.#offers(name)) {
      const names = this.#host.list().map((info) => info.name);
      // Not a ProtocolError: the SDK sends an error's own message, and ProtocolError's has a prefix.
      throw Object.assign(
        new Error(
          `UNKNOWN_TOOL: unknown tool ${JSON.stringify(name)}; available tools: ${names.length === 0 ? '(none)' : names.join(', ')}`,
        ),
        { code: ProtocolErrorCode.InvalidParams },
      );
    }
    const callId = `mcp_${randomUUID()}`;
    const unrouteProgress =
      route.sendProgress === undefined ? () => {} : this.#progress.route(callId, route.sendProgress);
    // Only a client that asked gets the call's output, and then as it is printed: on the request's
    // own stream (its SSE stream over HTTP, the connection over stdio), before the answer.
    const log = route.logs === undefined ? undefined : new CallLog(route.logs, name);
    this.#running += 1;
    try {
      const options: CallOptions = { callId, signal };
      if (this.#options.callTimeoutMs !== undefined) options.timeoutMs = this.#options.callTimeoutMs;
      if (log !== undefined) options.onOutput = (event) => log.take(event);
      const outcome = await this.#host.call(name, args, options);
      log?.end();
      await Promise.all(pending);
      return toCallToolResult(outcome);
    } finally {
      unrouteProgress();
      this.#running -= 1;
      if (this.#running === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /** Tells every client that can be told, once per change of what is offered (not per module event). */
  #checkOffered(): void {
    const offered = offeredKey(this.#host.list());
    if (offered === this.#offered) return;
    this.#offered = offered;
    for (const [server, state] of this.#listeners) {
      if (!state.ready) continue;
      server.sendToolListChanged().catch((error: unknown) => this.#options.onError?.(asError(error)));
    }
    for (const listener of this.#changeListeners) listener();
  }
}

/** Tools by name, so every answer to `tools/list` lists the same set in the same order. */
function sortedByName(tools: readonly ToolInfo[]): ToolInfo[] {
  return [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** What `tools/list` would answer: equal keys mean nothing a client sees changed. */
function offeredKey(tools: readonly ToolInfo[]): string {
  return JSON.stringify(sortedByName(tools).map(toMcpTool));
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
