/**
 * One call (or selftest) of an offered tool: the task, where it runs (its version's pool, or
 * in-process for the host's own tools), what it printed, and its outcome.
 */

import { errorOutcome, outcomeWithinBudget, successOutcome, type ToolOutcome } from '../boundary/outcome.js';
import type { CallSettings, CallTask, CapturedLog } from '../boundary/protocol.js';
import { relativeTo } from '../boundary/stack-frames.js';
import type { CallOptions } from '../host/call-options.js';
import type { ToolHostEvents, ToolOutputEvent } from '../host/events.js';
import type { OfferedTool } from '../registry/generation.js';
import type { Logger } from '../shared/logger.js';
import { toOriginalPaths } from '../snapshot/layout.js';
import { type JsonValue, text } from '../tool-module.js';
import { runInProcess } from './in-process-tool.js';
import { checkStructured } from './structured-result.js';
import type { CallPool, PoolReply } from './worker-pool.js';

/** What a call reads of the host's settings. */
export interface InvokeSettings {
  logger: Logger;
  errorStacksToModel: boolean;
  outputBudgetBytes: number;
  dataDir: string;
}

export interface Invocation {
  kind: 'run' | 'selftest';
  args: unknown;
  options: CallOptions;
  /** Unique per call in this host. */
  sequence: number;
  settings: InvokeSettings;
  /** The pool of the tool's version (module tools). */
  pool: CallPool | undefined;
  inProcess: { settings: CallSettings; closing: AbortSignal };
  emit: {
    emit<K extends keyof ToolHostEvents>(event: K, ...args: ToolHostEvents[K]): boolean;
    listenerCount(event: keyof ToolHostEvents): number;
  };
}

export async function invokeTool(tool: OfferedTool, invocation: Invocation): Promise<ToolOutcome> {
  const { options, sequence, settings, emit } = invocation;
  const callId = options.callId ?? `call_${sequence}`;
  // The caller's cap (checked by host.call) only ever shortens the tool's own timeout.
  const cap = options.timeoutMs;
  const timeoutMs = cap !== undefined ? Math.min(tool.info.timeoutMs, cap) : tool.info.timeoutMs;
  const { origin } = tool;
  const task: CallTask = {
    kind: invocation.kind,
    taskId: String(sequence),
    callId,
    sessionId: options.sessionId ?? 'default',
    moduleUrl: origin.kind === 'module' ? origin.record.url : '',
    args: invocation.args,
    withheld: options.withheld ?? [],
    timeoutMs,
  };
  const onProgress = (data: JsonValue) => emit.emit('progress', { name: tool.info.name, callId, data });
  const { onOutput } = options;
  // Only a call someone listens to has its output forwarded while it runs: the rest cost nothing.
  const deliver = (event: ToolOutputEvent) => {
    try {
      onOutput?.(event);
    } finally {
      if (emit.listenerCount('output') > 0) emit.emit('output', event);
    }
  };
  let onLogs: ((logs: CapturedLog[]) => void) | undefined;
  if (onOutput !== undefined && origin.kind === 'module') {
    task.forwardLogs = true;
    onLogs = (logs) => deliver({ name: tool.info.name, callId, logs, droppedChars: 0 });
  }

  let reply: PoolReply;
  if (origin.kind === 'host') {
    reply = await runInProcess(origin.tool, task, {
      settings: invocation.inProcess.settings,
      signal: options.signal,
      closing: invocation.inProcess.closing,
      onProgress,
    });
  } else if (invocation.pool !== undefined) {
    reply = await invocation.pool.run(task, { signal: options.signal, onProgress, onLogs });
  } else {
    return errorOutcome('HOST_CLOSED', 'the tool host is closed');
  }

  if (reply.logs.length > 0 || reply.droppedLogChars > 0) {
    const event: ToolOutputEvent = {
      name: tool.info.name,
      callId,
      logs: reply.logs,
      droppedChars: reply.droppedLogChars,
    };
    if (onOutput !== undefined || emit.listenerCount('output') > 0) {
      try {
        deliver(event);
      } catch {
        // A listener of this call's output that throws loses those lines, never the call.
      }
    } else
      settings.logger.info(`tool ${tool.info.name} printed: ${reply.logs.map((log) => log.text).join('')}`);
  }
  if (!reply.ok) {
    // A message naming the module (a failed import, a stack) names it where the user keeps it.
    const snapshot = origin.kind === 'module' ? origin.record.source.snapshot : undefined;
    const where = (text: string) => (snapshot === undefined ? text : toOriginalPaths(snapshot, text));
    const message = where(reply.error.message);
    const { stack } = reply.error;
    if (stack === undefined || origin.kind !== 'module') return errorOutcome(reply.error.code, message);
    // The tool's frames, with paths as its author reads them: relative to the package.
    const located = relativeTo(where(stack), origin.record.source.root);
    const outcome = errorOutcome(reply.error.code, message, located);
    if (settings.errorStacksToModel) outcome.content = [text(`${message}\n${located}`)];
    return outcome;
  }
  const outcome =
    outcomeWithinBudget(reply, settings.outputBudgetBytes) ??
    (await successOutcome(reply, {
      outputBudgetBytes: settings.outputBudgetBytes,
      dataDir: settings.dataDir,
      artifactName: `${tool.info.name}-${Date.now()}-${sequence}`,
    }));
  return invocation.kind === 'run' ? checkStructured(outcome, tool.validateOutput) : outcome;
}
