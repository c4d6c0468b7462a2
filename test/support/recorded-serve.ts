/**
 * `toolhost serve` over stdio with every byte of its stdout recorded (RecordingStdioTransport), the
 * SDK 1.x client connected, and what the hostile-package suites ask of it: a call, the good
 * package's answer, a result's error code, the log messages and the client's errors.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CallToolResult,
  JSONRPCMessageSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { RecordingStdioTransport } from './mcp-serve.js';

export interface RecordedServe {
  transport: RecordingStdioTransport;
  client: Client;
  /** Errors the client reported: a line on stdout that is not a JSON-RPC message would be one. */
  clientErrors: Error[];
  /** The data of every `notifications/message` the client received. */
  logged: unknown[];
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls the good package's `say` and expects its answer. */
  expectGoodAnswers(text: string): Promise<void>;
}

/** Starts `toolhost serve <args>` and connects the client (initialized). */
export async function connectRecorded(
  args: readonly string[],
  tmpDir: string,
  options: ConstructorParameters<typeof RecordingStdioTransport>[2] = {},
): Promise<RecordedServe> {
  const transport = new RecordingStdioTransport(args, tmpDir, options);
  const client = new Client({ name: 'toolhost-tests', version: '1.0.0' });
  const clientErrors: Error[] = [];
  const logged: unknown[] = [];
  client.onerror = (error) => clientErrors.push(error);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logged.push(notification.params.data);
  });
  await client.connect(transport);
  const call = (name: string, callArgs: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: callArgs }) as Promise<CallToolResult>;
  return {
    transport,
    client,
    clientErrors,
    logged,
    call,
    async expectGoodAnswers(text) {
      expect(await call('say', { text })).toEqual({
        content: [{ type: 'text', text: `you said: ${text}` }],
        isError: false,
      });
    },
  };
}

/** The `toolhost/errorCode` a tool error carries, if any. */
export function errorCode(result: CallToolResult): unknown {
  return (result._meta as Record<string, unknown> | undefined)?.['toolhost/errorCode'];
}

/**
 * Every line serve wrote on stdout was a JSON-RPC message (more than five of them), none holding any
 * of `forbidden` (what the hostile tool wrote), and the client reported no error.
 */
export function expectProtocolOnly(serve: RecordedServe, forbidden: readonly string[]): void {
  const lines = serve.transport.stdoutLines();
  expect(lines.length).toBeGreaterThan(5);
  for (const line of lines) {
    expect(JSONRPCMessageSchema.safeParse(JSON.parse(line)).success, line).toBe(true);
    for (const text of forbidden) expect(line).not.toContain(text);
  }
  expect(serve.clientErrors).toEqual([]);
}
