/**
 * One call (or selftest) of an offered tool: the task, where it runs (its version's pool, or
 * in-process for the host's own tools), what it printed, and its outcome.
 */

import { errorOutcome, outcomeWithinBudget, successOutcome, type ToolOutcome } from '../boundary/outcome.js';
import type { CallSettings, CallTask, CapturedLog } from '../boundary/protocol.js';
import { relativeTo } from '../boundary/stack-frames.js';
import type { CallOptions } from '../host/call-options.js';
import type { ToolHostEvents, ToolOutputEvent } from '../host/events.js';
import type { SecretRedactor } from '../process/network/secrets/redact.js';
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
  /** Takes every granted secret value out of what a call sends the host. */
  redactor: SecretRedactor;
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
  const task = callTask(tool, invocation, callId);
  const { redactor } = settings;
  const onProgress = (data: JsonValue) =>
    emit.emit('progress', { name: tool.info.name, callId, data: redactor.data(data) });
  const { onOutput } = options;
  let onLogs: ((logs: CapturedLog[]) => void) | undefined;
  if (onOutput !== undefined && tool.origin.kind === 'module') {
    task.forwardLogs = true;
    const output = outputDelivery(onOutput, emit);
    onLogs = (logs) =>
      output.deliver({ name: tool.info.name, callId, logs: redactor.data(logs), droppedChars: 0 });
  }

  const running = startRun(tool, invocation, task, { onProgress, onLogs });
  if (running === undefined) return errorOutcome('HOST_CLOSED', 'the tool host is closed');
  // Before anything of it is logged, delivered, written under dataDir or returned.
  const reply = redactor.data(await running);

  if (reply.logs.length > 0 || reply.droppedLogChars > 0)
    reportLogs(tool, callId, reply, outputDelivery(onOutput, emit), settings.logger);
  if (!reply.ok) return failureOutcome(tool, reply.error, settings);
  const outcome =
    outcomeWithinBudget(reply, settings.outputBudgetBytes) ??
    (await successOutcome(reply, {
      outputBudgetBytes: settings.outputBudgetBytes,
      dataDir: settings.dataDir,
      artifactName: `${tool.info.name}-${Date.now()}-${sequence}`,
    }));
  return invocation.kind === 'run' ? checkStructured(outcome, tool.validateOutput) : outcome;
}

/** The task as the worker (or the in-process runner) receives it. */
function callTask(tool: OfferedTool, invocation: Invocation, callId: string): CallTask {
  const { options, sequence } = invocation;
  // The caller's cap (checked by host.call) only ever shortens the tool's own timeout.
  const cap = options.timeoutMs;
  const timeoutMs = cap !== undefined ? Math.min(tool.info.timeoutMs, cap) : tool.info.timeoutMs;
  const { origin } = tool;
  return {
    kind: invocation.kind,
    taskId: String(sequence),
    callId,
    sessionId: options.sessionId ?? 'default',
    moduleUrl: origin.kind === 'module' ? origin.record.url : '',
    args: invocation.args,
    withheld: options.withheld ?? [],
    timeoutMs,
  };
}

/**
 * Where a call's printing goes: the caller's `onOutput`, then the host's `'output'` listeners. Made
 * only for a call that printed or forwards its output: most calls do neither.
 */
interface OutputDelivery {
  /** Whether anyone listens to this call's output. */
  heard(): boolean;
  deliver(event: ToolOutputEvent): void;
}

function outputDelivery(onOutput: CallOptions['onOutput'], emit: Invocation['emit']): OutputDelivery {
  return {
    heard: () => onOutput !== undefined || emit.listenerCount('output') > 0,
    // Only a call someone listens to has its output forwarded while it runs: the rest cost nothing.
    deliver: (event) => {
      try {
        onOutput?.(event);
      } finally {
        if (emit.listenerCount('output') > 0) emit.emit('output', event);
      }
    },
  };
}

/** Starts the call where it runs: in-process for the host's own tools, else its version's pool (none once closed). */
function startRun(
  tool: OfferedTool,
  invocation: Invocation,
  task: CallTask,
  listeners: { onProgress: (data: JsonValue) => void; onLogs: ((logs: CapturedLog[]) => void) | undefined },
): Promise<PoolReply> | undefined {
  const { origin } = tool;
  const { options } = invocation;
  const { onProgress, onLogs } = listeners;
  if (origin.kind === 'host') {
    return runInProcess(origin.tool, task, {
      settings: invocation.inProcess.settings,
      signal: options.signal,
      closing: invocation.inProcess.closing,
      onProgress,
    });
  }
  if (invocation.pool !== undefined) {
    return invocation.pool.run(task, { signal: options.signal, onProgress, onLogs });
  }
  return undefined;
}

/** What the call printed, to whoever listens, else to the host's log. */
function reportLogs(
  tool: OfferedTool,
  callId: string,
  reply: PoolReply,
  output: OutputDelivery,
  logger: Logger,
): void {
  const event: ToolOutputEvent = {
    name: tool.info.name,
    callId,
    logs: reply.logs,
    droppedChars: reply.droppedLogChars,
  };
  if (output.heard()) {
    try {
      output.deliver(event);
    } catch {
      // A listener of this call's output that throws loses those lines, never the call.
    }
  } else logger.info(`tool ${tool.info.name} printed: ${reply.logs.map((log) => log.text).join('')}`);
}

/** A failed call's outcome; a message naming the module (a failed import, a stack) names it where the user keeps it. */
function failureOutcome(
  tool: OfferedTool,
  error: (PoolReply & { ok: false })['error'],
  settings: InvokeSettings,
): ToolOutcome {
  const { origin } = tool;
  const snapshot = origin.kind === 'module' ? origin.record.source.snapshot : undefined;
  const where = (text: string) => (snapshot === undefined ? text : toOriginalPaths(snapshot, text));
  const message = where(error.message);
  const { stack } = error;
  if (stack === undefined || origin.kind !== 'module') return errorOutcome(error.code, message);
  // The tool's frames, with paths as its author reads them: relative to the package.
  const located = relativeTo(where(stack), origin.record.source.root);
  const outcome = errorOutcome(error.code, message, located);
  if (settings.errorStacksToModel) outcome.content = [text(`${message}\n${located}`)];
  return outcome;
}
