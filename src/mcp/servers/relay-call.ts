/**
 * One `tools/call` relayed to a running server, answered exactly once: the server's result checked
 * (call-result.ts), or `TOOL_TIMEOUT` at the deadline (the server gets `notifications/cancelled`),
 * `CALL_ABORTED` when the caller aborts, `TOOL_CRASHED` / `TOOL_OUT_OF_MEMORY` with the server's
 * last stderr words when it ends during the call, `TOOL_BAD_RESULT` for a malformed reply, and
 * `TOOL_THREW` for a JSON-RPC error it answers with. Its progress is bounded as a tool's is.
 */
import { parseProgressData } from '../../boundary/parse-call-reply.js';
import { MAX_PROGRESS_MESSAGES } from '../../boundary/protocol.js';
import { escapeControl, truncate } from '../../boundary/sanitize.js';
import type { JsonValue } from '../../boundary/tool-contract.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';
import type { CallerSignal } from '../../calls/pool-call.js';
import { replyOfResult } from './call-result.js';
import { type ServerConnection, stderrWords } from './connection.js';
import { NETWORK_OVER_CODE } from './egress-calls.js';
import { MALFORMED_REPLY_CODE } from './stdio-transport.js';

export interface RelayOptions {
  serverName: string;
  /** The call's deadline (the host's clock, ms since the epoch). */
  deadline: number;
  timeoutMs: number;
  signal?: CallerSignal | undefined;
  onProgress: (data: JsonValue) => void;
  maxResultBytes: number;
  /** The server's memory limit, for the message when it goes over. */
  memoryMb: number;
  /** The call ran over its deadline: the server is checked before it takes another call. */
  onTimeout: (connection: ServerConnection) => void;
}

export async function relayCall(
  connection: ServerConnection,
  toolName: string,
  args: unknown,
  options: RelayOptions,
): Promise<PoolReply> {
  const controller = new AbortController();
  const timedOut = new Error('timed out');
  const callerAborted = new Error('aborted by its caller');
  const timer = setTimeout(() => controller.abort(timedOut), Math.max(1, options.deadline - Date.now()));
  const onAbort = () => controller.abort(callerAborted);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let progressSent = 0;
    const result = await connection.callTool(toolName, args, {
      timeoutMs: options.timeoutMs,
      signal: controller.signal,
      // Checked and bounded as a tool's progress is: plain data, so many messages a call, so large each.
      onProgress: (data) => {
        if (progressSent >= MAX_PROGRESS_MESSAGES) return;
        const parsed = parseProgressData(data);
        if (!parsed.ok) return;
        progressSent += 1;
        options.onProgress(parsed.value);
      },
    });
    return replyOfResult(result, options.maxResultBytes);
  } catch (error) {
    if (controller.signal.reason === timedOut) {
      options.onTimeout(connection);
      return failure('TOOL_TIMEOUT', `tool timed out after ${options.timeoutMs} ms`);
    }
    if (controller.signal.reason === callerAborted) {
      return failure('CALL_ABORTED', 'the call was aborted by its caller');
    }
    if (connection.disconnected) {
      const exit = await connection.end();
      if (exit.outOfMemory) {
        return failure(
          'TOOL_OUT_OF_MEMORY',
          `the MCP server ${options.serverName} went over its memory limit (${options.memoryMb} MB, processMemoryMb) and was ended during the call`,
        );
      }
      return failure(
        'TOOL_CRASHED',
        `the MCP server ${options.serverName} ${exit.description} during the call${stderrWords(connection.stderrTail)}`,
      );
    }
    const message = oneLine(error instanceof Error ? error.message : String(error));
    // Its proxy cut the call's connections: it moved more than maxNetworkBytesPerCall.
    if ((error as { code?: unknown }).code === NETWORK_OVER_CODE)
      return failure('TOOL_ACCESS_DENIED', message);
    if ((error as { code?: unknown }).code === MALFORMED_REPLY_CODE) {
      return failure('TOOL_BAD_RESULT', message);
    }
    return failure('TOOL_THREW', `the MCP server ${options.serverName} answered with an error: ${message}`);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** A server's words as one bounded line, without control characters. */
function oneLine(text: string): string {
  return escapeControl(truncate(text.replace(/\s+/g, ' ').trim(), 1000));
}
