/**
 * The official MCP clients of both SDK lines, connected to a `toolhost serve` child, for every
 * protocol revision serve speaks: the v2 client pinned to 2026-07-28 (no `initialize`), the v1
 * client (its `initialize` offers 2025-11-25), and the v2 client offering 2025-06-18 only. One
 * small face over them, so a suite can run the same sentences against each.
 */
import type { Readable } from 'node:stream';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI, REPO, withTier } from './cli-run.js';
import { StderrLog, serveEnv } from './mcp-serve.js';

/** One `notifications/message`'s params. */
export interface LogEntry {
  level: string;
  logger?: string | undefined;
  data: unknown;
}

/** The messages a client received, and waiters for one yet to come. */
class LogBook {
  readonly logs: LogEntry[] = [];
  readonly #waiters = new Set<(entry: LogEntry) => boolean>();

  add(entry: LogEntry): void {
    this.logs.push(entry);
    for (const waiter of this.#waiters) if (waiter(entry)) this.#waiters.delete(waiter);
  }

  waitFor(accept: (entry: LogEntry) => boolean): Promise<LogEntry> {
    const seen = this.logs.find(accept);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      this.#waiters.add((entry) => {
        if (!accept(entry)) return false;
        resolve(entry);
        return true;
      });
    });
  }
}

/** Which client, speaking which revision. */
export type Revision = '2026-07-28' | '2025-11-25' | '2025-06-18';
export const REVISIONS: readonly Revision[] = ['2026-07-28', '2025-11-25', '2025-06-18'];

/** What a suite needs of a connected client, whichever SDK it is. */
export interface McpClient {
  revision: Revision;
  /** The revision the connection settled on. */
  negotiated(): string | undefined;
  listToolNames(): Promise<string[]>;
  /** A `tools/call`; `logLevel` asks for log messages as the revision asks (the call's `_meta`, or `logging/setLevel`). */
  call(
    name: string,
    args: Record<string, unknown>,
    options?: {
      logLevel?: 'debug' | 'info';
      onProgress?: (progress: { progress: number; total?: number }) => void;
    },
  ): Promise<{ content: Array<{ type: string; text?: string }>; isError?: boolean }>;
  /** Every `notifications/message` received so far, in order. */
  logs: LogEntry[];
  /** Resolves with the first message, received or yet to come, that `accept` takes. */
  waitForLog(accept: (entry: LogEntry) => boolean): Promise<LogEntry>;
  /** The raw v2 client, for what only it has (`listen`). */
  v2?: ClientV2;
  close(): Promise<void>;
  /** stderr of the serve process (stdio only). */
  stderr?: StderrLog;
}

/** `toolhost serve <args>` over stdio, with the client for `revision`. */
export async function connectStdio(revision: Revision, args: readonly string[], tmpDir: string) {
  const params = {
    command: process.execPath,
    args: [CLI, ...withTier(['serve', ...args])],
    env: serveEnv(tmpDir),
    cwd: REPO,
    stderr: 'pipe' as const,
  };
  if (revision === '2025-11-25') {
    const transport = new StdioV1(params);
    const stderr = new StderrLog(transport.stderr as Readable);
    return { ...(await wrapV1(transport)), stderr };
  }
  const transport = new StdioV2(params);
  const stderr = new StderrLog(transport.stderr as Readable);
  return { ...(await wrapV2(revision, transport)), stderr };
}

/** The client for `revision` over Streamable HTTP at `url`. */
export async function connectHttp(revision: Revision, url: string): Promise<McpClient> {
  if (revision === '2025-11-25') return wrapV1(new HttpV1(new URL(url)));
  return wrapV2(revision, new HttpV2(new URL(url)));
}

async function wrapV2(revision: Revision, transport: StdioV2 | HttpV2): Promise<McpClient> {
  const modern = revision === '2026-07-28';
  const client = new ClientV2(
    { name: 'toolhost-tests', version: '1.0.0' },
    modern
      ? { versionNegotiation: { mode: { pin: '2026-07-28' } } }
      : { supportedProtocolVersions: [revision] },
  );
  const book = new LogBook();
  client.setNotificationHandler('notifications/message', (notification) => {
    book.add(notification.params as LogEntry);
  });
  await client.connect(transport);
  let levelSet = false;
  return {
    revision,
    negotiated: () => client.getNegotiatedProtocolVersion(),
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args, options = {}) => {
      if (!modern && options.logLevel !== undefined && !levelSet) {
        await client.setLoggingLevel(options.logLevel);
        levelSet = true;
      }
      const meta =
        modern && options.logLevel !== undefined
          ? { 'io.modelcontextprotocol/logLevel': options.logLevel }
          : undefined;
      const result = await client.callTool(
        { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) },
        options.onProgress === undefined
          ? {}
          : { onprogress: (progress: { progress: number }) => options.onProgress?.(progress) },
      );
      return result as Awaited<ReturnType<McpClient['call']>>;
    },
    logs: book.logs,
    waitForLog: (accept) => book.waitFor(accept),
    v2: client,
    close: () => client.close(),
  };
}

async function wrapV1(transport: StdioV1 | HttpV1): Promise<McpClient> {
  const client = new ClientV1({ name: 'toolhost-tests', version: '1.0.0' });
  const book = new LogBook();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    book.add(notification.params);
  });
  // The v1 client keeps no record of the version the server answered; the answer itself says it.
  let negotiated: string | undefined;
  let handler: ((message: unknown) => void) | undefined;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (next: (message: unknown) => void) => {
      handler = (message) => {
        const version = (message as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
        if (negotiated === undefined && typeof version === 'string') negotiated = version;
        next(message);
      };
    },
  });
  await client.connect(transport);
  let levelSet = false;
  return {
    revision: '2025-11-25',
    negotiated: () => negotiated,
    listToolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args, options = {}) => {
      if (options.logLevel !== undefined && !levelSet) {
        await client.setLoggingLevel(options.logLevel);
        levelSet = true;
      }
      const result = await client.callTool(
        { name, arguments: args },
        undefined,
        options.onProgress === undefined
          ? {}
          : { onprogress: (progress: { progress: number }) => options.onProgress?.(progress) },
      );
      return result as Awaited<ReturnType<McpClient['call']>>;
    },
    logs: book.logs,
    waitForLog: (accept) => book.waitFor(accept),
    close: () => client.close(),
  };
}
