/**
 * The MCP side of a ToolHost: MCP `Server`s (the SDK's low-level one: the set of tools changes
 * while it runs and the schemas are plain JSON Schema, which the high-level `McpServer` would want
 * as zod) whose `tools/list` is `host.list()` and whose `tools/call` is `host.call`. Over stdio there
 * is one server for the whole connection; over stateless HTTP one per request, all sharing this
 * object's progress routing and offered-set tracking.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { ToolInfo } from '../declaration/check.js';
import type { CallOptions } from '../host/options.js';
import type { ToolHost } from '../host/tool-host.js';
import { toCallToolResult, toMcpTool } from './content.js';
import { ProgressRouter } from './progress.js';

/** The part of a ToolHost the MCP server uses. */
export type ServedHost = Pick<ToolHost, 'list' | 'call' | 'on' | 'off'>;

export interface ToolServerOptions {
  /** `serverInfo` in the `initialize` answer. */
  name: string;
  version: string;
  /**
   * Whether servers announce `tools.listChanged` and send `notifications/tools/list_changed`. Only a
   * connection the server can speak on unasked (stdio) can; stateless HTTP has no such channel.
   */
  listChanged: boolean;
  /** Caps every call's timeout (the tool's own `timeoutMs` holds too). */
  callTimeoutMs?: number | undefined;
  /** Told when sending a notification failed (the client went away); never throws. */
  onError?: (error: Error) => void;
}

/**
 * Makes MCP servers that answer from one host, and keeps what they share: progress routing, the
 * offered set last announced, and the count of calls being answered (for a clean shut-down).
 */
export class ToolServer {
  readonly #host: ServedHost;
  readonly #options: ToolServerOptions;
  readonly #progress: ProgressRouter;
  /**
   * One for every server made here: a Server builds an Ajv instance of its own otherwise (for
   * elicitation, which toolhost never asks for), and that was most of the cost of an HTTP request.
   */
  readonly #validator = new AjvJsonSchemaValidator();
  /** Servers that asked to hear of changes, and whether their client has finished initializing. */
  readonly #listeners = new Map<Server, { initialized: boolean }>();
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

  /** A new MCP server answering from the host. Connect it to a transport; close it when that ends. */
  createServer(): Server {
    const server = new Server(
      { name: this.#options.name, version: this.#options.version },
      {
        capabilities: { tools: { listChanged: this.#options.listChanged } },
        jsonSchemaValidator: this.#validator,
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.#host.list().map(toMcpTool) }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      this.#call(request.params.name, request.params.arguments ?? {}, extra.signal, (params) =>
        extra._meta?.progressToken === undefined
          ? undefined
          : extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken: extra._meta.progressToken, ...params },
              })
              .catch((error: unknown) => this.#options.onError?.(asError(error))),
      ),
    );
    if (this.#options.listChanged) {
      const state = { initialized: false };
      this.#listeners.set(server, state);
      server.oninitialized = () => {
        state.initialized = true;
      };
      server.onclose = () => this.#listeners.delete(server);
    }
    return server;
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
  }

  async #call(
    name: string,
    args: unknown,
    signal: AbortSignal,
    sendProgress: (params: { progress: number; total?: number; message?: string }) => void,
  ): Promise<CallToolResult> {
    // The spec lists an unknown tool among protocol errors (-32602), beside malformed requests;
    // invalid arguments are a tool execution error the model can correct (isError, below).
    if (!this.#host.list().some((info) => info.name === name)) {
      const names = this.#host.list().map((info) => info.name);
      // Not an McpError: the SDK sends an error's own message, and McpError's starts "MCP error -32602:".
      throw Object.assign(
        new Error(
          `UNKNOWN_TOOL: unknown tool ${JSON.stringify(name)}; available tools: ${names.length === 0 ? '(none)' : names.join(', ')}`,
        ),
        { code: ErrorCode.InvalidParams },
      );
    }
    const callId = `mcp_${randomUUID()}`;
    const unroute = this.#progress.route(callId, sendProgress);
    this.#running += 1;
    try {
      const options: CallOptions = { callId, signal };
      if (this.#options.callTimeoutMs !== undefined) options.timeoutMs = this.#options.callTimeoutMs;
      return toCallToolResult(await this.#host.call(name, args, options));
    } finally {
      unroute();
      this.#running -= 1;
      if (this.#running === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /** Tells every initialized client, once per change of what is offered (not per module event). */
  #checkOffered(): void {
    const offered = offeredKey(this.#host.list());
    if (offered === this.#offered) return;
    this.#offered = offered;
    for (const [server, state] of this.#listeners) {
      if (!state.initialized) continue;
      server.sendToolListChanged().catch((error: unknown) => this.#options.onError?.(asError(error)));
    }
  }
}

/** What `tools/list` would answer, in a canonical order: equal keys mean nothing a client sees changed. */
function offeredKey(tools: readonly ToolInfo[]): string {
  return JSON.stringify(
    [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(toMcpTool),
  );
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
