/**
 * The call worker: piscina's handler for every call of one trust domain (package). Tool modules are
 * imported per task, never as the pool's `filename`, so a module that throws at load is one failed
 * call and not a wedged pool. Everything the tool produces is encoded here, so what crosses to the
 * host is plain data of bounded size.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import timers from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';
import { encodeResult } from '../src/encode-result.js';
import { describeThrown, type ToolErrorCode } from '../src/errors.js';
import {
  type CallReply,
  type CallTask,
  type CapturedLog,
  WORKER_MESSAGE_TAG,
  type WorkerMessage,
} from '../src/protocol.js';
import type { JsonValue, ToolContext } from '../src/tool-module.js';
import { hardenWorker } from './harden.js';

interface CallWorkerData {
  allowAddons: boolean;
}

const MAX_PROGRESS_MESSAGES = 1000;

hardenWorker({ allowAddons: (workerData as CallWorkerData | undefined)?.allowAddons === true });

const original = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  clearImmediate: globalThis.clearImmediate,
  exit: process.exit.bind(process),
};

/** The call running in this worker right now (piscina gives each worker one task at a time). */
interface ActiveCall {
  task: CallTask;
  logs: CapturedLog[];
  logBytes: number;
  droppedLogBytes: number;
  timeouts: Set<NodeJS.Timeout>;
  immediates: Set<NodeJS.Immediate>;
  progressSent: number;
  tmpDirMade: boolean;
}

let active: ActiveCall | undefined;

function post(message: WorkerMessage): void {
  parentPort?.postMessage(message);
}

// A tool's printing never reaches the host's stdout (which may be a protocol channel): it is kept,
// up to a cap, and handed to the host with the call's reply.
function capture(stream: 'stdout' | 'stderr') {
  return (chunk: unknown, ...rest: unknown[]): boolean => {
    const callback = rest.find((item) => typeof item === 'function') as (() => void) | undefined;
    const value = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
    if (active !== undefined) {
      const room = active.task.maxLogBytes - active.logBytes;
      if (room >= value.length) {
        active.logs.push({ stream, text: value });
        active.logBytes += value.length;
      } else {
        if (room > 0) active.logs.push({ stream, text: value.slice(0, room) });
        active.logBytes += Math.max(room, 0);
        active.droppedLogBytes += value.length - Math.max(room, 0);
      }
    }
    callback?.();
    return true;
  };
}
process.stdout.write = capture('stdout') as typeof process.stdout.write;
process.stderr.write = capture('stderr') as typeof process.stderr.write;

// Timers a call starts are cleared when it ends, so an interval left running can't act inside a
// later call. Both the globals and `node:timers` are wrapped.
function trackedTimeout(kind: 'setTimeout' | 'setInterval') {
  const start = original[kind];
  return ((...args: Parameters<typeof setTimeout>) => {
    const handle = start(...args);
    active?.timeouts.add(handle);
    return handle;
  }) as typeof setTimeout;
}
const trackedImmediate = ((...args: Parameters<typeof setImmediate>) => {
  const handle = original.setImmediate(...args);
  active?.immediates.add(handle);
  return handle;
}) as typeof setImmediate;
globalThis.setTimeout = trackedTimeout('setTimeout');
globalThis.setInterval = trackedTimeout('setInterval') as typeof setInterval;
globalThis.setImmediate = trackedImmediate;
timers.setTimeout = globalThis.setTimeout;
timers.setInterval = globalThis.setInterval;
timers.setImmediate = globalThis.setImmediate;
syncBuiltinESMExports();

// A fault outside the tool's own promise (an uncaught exception in a callback, an unhandled
// rejection, process.exit) leaves this worker in an unknown state: report it, then end the worker so
// piscina replaces it. Node delivers the report before the worker's 'exit' event.
function fault(code: ToolErrorCode, message: string): void {
  post({
    tag: WORKER_MESSAGE_TAG,
    type: 'fault',
    taskId: active?.task.taskId ?? null,
    error: { code, message },
    logs: active?.logs ?? [],
  });
}
process.on('uncaughtException', (error) => {
  fault('TOOL_CRASHED', `uncaught exception: ${describeThrown(error)}`);
  original.exit(70);
});
process.on('unhandledRejection', (reason) => {
  fault('TOOL_UNHANDLED_REJECTION', `unhandled rejection: ${describeThrown(reason)}`);
  original.exit(70);
});
process.exit = ((code?: number | string | null) => {
  fault('TOOL_EXITED', `the tool called process.exit(${code ?? ''})`);
  original.exit(code ?? 0);
}) as typeof process.exit;

function contextFor(call: ActiveCall, signal: AbortSignal): ToolContext {
  const { task } = call;
  return {
    sessionId: task.sessionId,
    callId: task.callId,
    dataDir: task.dataDir,
    withheld: Object.freeze([...task.withheld]),
    signal,
    emit(data: JsonValue) {
      if (call !== active || call.progressSent >= MAX_PROGRESS_MESSAGES) return;
      call.progressSent += 1;
      try {
        post({ tag: WORKER_MESSAGE_TAG, type: 'progress', taskId: task.taskId, data });
      } catch {
        // Data that can't be cloned is dropped: progress is advisory.
      }
    },
    get tmpDir() {
      if (!call.tmpDirMade) {
        mkdirSync(task.tmpDir, { recursive: true });
        call.tmpDirMade = true;
      }
      return task.tmpDir;
    },
  };
}

function errorCodeOf(error: unknown): ToolErrorCode {
  if (error instanceof RangeError && error.message.includes('Maximum call stack size exceeded')) {
    return 'TOOL_STACK_OVERFLOW';
  }
  return 'TOOL_THREW';
}

async function loadEntry(task: CallTask): Promise<((...args: unknown[]) => unknown) | string> {
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(task.moduleUrl)) as Record<string, unknown>;
  } catch (error) {
    return `the tool module failed to load: ${describeThrown(error)}`;
  }
  const fallback = namespace['default'];
  const source =
    typeof fallback === 'object' && fallback !== null && !('name' in namespace)
      ? (fallback as Record<string, unknown>)
      : namespace;
  const entry = source[task.kind];
  if (typeof entry !== 'function') return `the tool module has no ${task.kind} function`;
  return (entry as (...args: unknown[]) => unknown).bind(source);
}

export default async function callTool(task: CallTask): Promise<CallReply> {
  const call: ActiveCall = {
    task,
    logs: [],
    logBytes: 0,
    droppedLogBytes: 0,
    timeouts: new Set(),
    immediates: new Set(),
    progressSent: 0,
    tmpDirMade: false,
  };
  active = call;
  post({ tag: WORKER_MESSAGE_TAG, type: 'started', taskId: task.taskId });

  // The signal aborts at the timeout; the host terminates this worker a short grace later if the
  // tool has not finished by then.
  const controller = new AbortController();
  let timedOut = false;
  const timer = original.setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`tool timed out after ${task.timeoutMs} ms`, 'TimeoutError'));
  }, task.timeoutMs);

  let reply: CallReply;
  try {
    const entry = await loadEntry(task);
    if (typeof entry === 'string') {
      reply = failure(call, 'TOOL_LOAD_FAILED', entry);
    } else {
      const ctx = contextFor(call, controller.signal);
      let value: unknown;
      let thrown: { error: unknown } | undefined;
      try {
        value = task.kind === 'run' ? await entry(task.args, ctx) : await entry(ctx);
      } catch (error) {
        thrown = { error };
      }
      // One turn of the event loop lets a rejection the tool left behind surface as this call's fault.
      await new Promise((resolve) => original.setImmediate(resolve));
      if (timedOut) {
        reply = failure(call, 'TOOL_TIMEOUT', `tool timed out after ${task.timeoutMs} ms`);
      } else if (thrown !== undefined) {
        reply = failure(call, errorCodeOf(thrown.error), describeThrown(thrown.error));
      } else {
        const encoded = encodeResult(value, task.maxResultBytes);
        reply = encoded.ok
          ? { ...encoded, logs: call.logs, droppedLogBytes: call.droppedLogBytes }
          : failure(call, encoded.error.code, encoded.error.message);
      }
    }
  } finally {
    original.clearTimeout(timer);
    for (const handle of call.timeouts) original.clearTimeout(handle);
    for (const handle of call.immediates) original.clearImmediate(handle);
    active = undefined;
    if (call.tmpDirMade) rmSync(task.tmpDir, { recursive: true, force: true, maxRetries: 2 });
  }
  return reply;
}

function failure(call: ActiveCall, code: ToolErrorCode, message: string): CallReply {
  return { ok: false, error: { code, message }, logs: call.logs, droppedLogBytes: call.droppedLogBytes };
}
