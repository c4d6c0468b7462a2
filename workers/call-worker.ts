/**
 * The call worker: piscina's handler for every call of one trust domain (package). Tool modules are
 * imported per task, never as the pool's `filename`, so a module that throws at load is one failed
 * call and not a wedged pool. Everything the tool produces is encoded here, so what crosses to the
 * host is plain data of bounded size.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import timers from 'node:timers';
import timersPromises from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { encodeResult } from '../src/encode-result.js';
import { describeThrown, type ToolErrorCode } from '../src/errors.js';
import {
  type CallReply,
  type CallSettings,
  type CallStarts,
  type CallTask,
  type CapturedLog,
  callTmpDir,
  stampCallStart,
  WORKER_MESSAGE_TAG,
  type WorkerMessage,
} from '../src/protocol.js';
import type { JsonValue, ToolContext } from '../src/tool-module.js';
import { accessDenied } from './access-denied.js';
import { hardenWorker } from './harden.js';
import { toolSource } from './tool-source.js';

type CallWorkerData = CallSettings & { allowAddons: boolean; starts: CallStarts };

const MAX_PROGRESS_MESSAGES = 1000;

const settings = workerData as CallWorkerData;
hardenWorker({ allowAddons: settings.allowAddons === true });

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
  /** Timers the call started (made on first use: most calls start none). */
  timeouts: Set<NodeJS.Timeout> | undefined;
  immediates: Set<NodeJS.Immediate> | undefined;
  progressSent: number;
  tmpDirMade: boolean;
  /** Aborts when the call ends: it ends the promise timers the call started (made on first use). */
  ended: AbortController | undefined;
  /** `ctx.signal`'s controller (made on first read of `ctx.signal`). */
  signal: AbortController | undefined;
  startedAt: number;
  timedOut: boolean;
}

/** One reason for every call's end: aborting with a fresh DOMException costs a stack trace each time. */
const CALL_ENDED = new Error('the call ended');

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
      const room = settings.maxLogBytes - active.logBytes;
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

function trackTimeout(call: ActiveCall, handle: NodeJS.Timeout): void {
  call.timeouts ??= new Set();
  call.timeouts.add(handle);
}

// Timers a call starts are cleared when it ends, so an interval left running can't act inside a
// later call. Both the globals and `node:timers` are wrapped.
function trackedTimeout(kind: 'setTimeout' | 'setInterval') {
  const start = original[kind];
  return ((...args: Parameters<typeof setTimeout>) => {
    const handle = start(...args);
    if (active !== undefined) trackTimeout(active, handle);
    return handle;
  }) as typeof setTimeout;
}
const trackedImmediate = ((...args: Parameters<typeof setImmediate>) => {
  const handle = original.setImmediate(...args);
  if (active !== undefined) {
    active.immediates ??= new Set();
    active.immediates.add(handle);
  }
  return handle;
}) as typeof setImmediate;
globalThis.setTimeout = trackedTimeout('setTimeout');
globalThis.setInterval = trackedTimeout('setInterval') as typeof setInterval;
globalThis.setImmediate = trackedImmediate;
timers.setTimeout = globalThis.setTimeout;
timers.setInterval = globalThis.setInterval;
timers.setImmediate = globalThis.setImmediate;

// The same for `node:timers/promises`: its timers get a signal that also aborts when the call ends,
// and a promise whose timer ended that way never settles, as a cleared timer never fires. Left alone,
// such a timer would fire in a later call (an idle piscina worker runs no timers) and blame it.
const originalPromises = {
  setTimeout: timersPromises.setTimeout,
  setImmediate: timersPromises.setImmediate,
  setInterval: timersPromises.setInterval,
};
type PromiseTimerOptions = { signal?: AbortSignal; ref?: boolean } | undefined;
function boundToCall(options: PromiseTimerOptions): { options: PromiseTimerOptions; ended?: AbortSignal } {
  if (active === undefined) return { options };
  active.ended ??= new AbortController();
  const ended = active.ended.signal;
  const signal = options?.signal === undefined ? ended : AbortSignal.any([options.signal, ended]);
  return { options: { ...options, signal }, ended };
}
function unlessEnded<T>(promise: Promise<T>, ended: AbortSignal | undefined): Promise<T> {
  if (ended === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    promise.then(resolve, (error: unknown) => {
      if (!ended.aborted) reject(error);
    });
  });
}
timersPromises.setTimeout = ((delay?: number, value?: unknown, options?: PromiseTimerOptions) => {
  const bound = boundToCall(options);
  return unlessEnded(originalPromises.setTimeout(delay, value, bound.options), bound.ended);
}) as typeof timersPromises.setTimeout;
timersPromises.setImmediate = ((value?: unknown, options?: PromiseTimerOptions) => {
  const bound = boundToCall(options);
  return unlessEnded(originalPromises.setImmediate(value, bound.options), bound.ended);
}) as typeof timersPromises.setImmediate;
timersPromises.setInterval = ((delay?: number, value?: unknown, options?: PromiseTimerOptions) => {
  const bound = boundToCall(options);
  const ticks = originalPromises.setInterval(delay, value, bound.options)[Symbol.asyncIterator]();
  const { ended } = bound;
  if (ended === undefined) return { [Symbol.asyncIterator]: () => ticks };
  const wrapped: AsyncIterableIterator<unknown> = {
    next: () => unlessEnded(ticks.next(), ended),
    return: () => ticks.return?.() ?? Promise.resolve({ done: true, value: undefined }),
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped;
}) as typeof timersPromises.setInterval;
timersPromises.scheduler.wait = (delay, options) => timersPromises.setTimeout(delay, undefined, options);
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

/**
 * `ctx.signal` aborts at the timeout; the host terminates this worker a short grace later if the
 * tool has not finished by then. It is made when the tool first reads it (most tools never do),
 * and counts from the call's start.
 */
function signalFor(call: ActiveCall): AbortSignal {
  if (call.signal !== undefined) return call.signal.signal;
  const controller = new AbortController();
  call.signal = controller;
  const { timeoutMs } = call.task;
  const timer = original.setTimeout(
    () => {
      call.timedOut = true;
      controller.abort(new DOMException(`tool timed out after ${timeoutMs} ms`, 'TimeoutError'));
    },
    Math.max(0, timeoutMs - (performance.now() - call.startedAt)),
  );
  // Cleared with the call's other timers when it ends.
  trackTimeout(call, timer);
  return controller.signal;
}

function contextFor(call: ActiveCall): ToolContext {
  const { task } = call;
  return {
    sessionId: task.sessionId,
    callId: task.callId,
    dataDir: settings.dataDir,
    withheld: Object.freeze([...task.withheld]),
    get signal() {
      return signalFor(call);
    },
    emit(data: JsonValue) {
      if (call !== active || call.progressSent >= MAX_PROGRESS_MESSAGES) return;
      try {
        post({ tag: WORKER_MESSAGE_TAG, type: 'progress', taskId: task.taskId, data });
        call.progressSent += 1;
      } catch {
        // Data that can't be cloned is dropped: progress is advisory.
      }
    },
    get tmpDir() {
      const path = callTmpDir(settings, task);
      if (!call.tmpDirMade) {
        mkdirSync(path, { recursive: true });
        call.tmpDirMade = true;
      }
      return path;
    },
  };
}

/** What a throw means: a stack overflow and a refusal of the strict tier get codes of their own. */
function thrownFailure(error: unknown): { code: ToolErrorCode; message: string } {
  if (error instanceof RangeError && error.message.includes('Maximum call stack size exceeded')) {
    return { code: 'TOOL_STACK_OVERFLOW', message: describeThrown(error) };
  }
  return accessDenied(error) ?? { code: 'TOOL_THREW', message: describeThrown(error) };
}

type Entry = (...args: unknown[]) => unknown;

/** Entries already imported by this worker: the URL carries the module's version. */
const entries = new Map<string, Entry>();

async function loadEntry(task: CallTask): Promise<Entry | string> {
  const key = `${task.kind} ${task.moduleUrl}`;
  const known = entries.get(key);
  if (known !== undefined) return known;
  const entry = await importEntry(task);
  if (typeof entry !== 'string') entries.set(key, entry);
  return entry;
}

async function importEntry(task: CallTask): Promise<Entry | string> {
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(task.moduleUrl)) as Record<string, unknown>;
  } catch (error) {
    return `the tool module failed to load: ${describeThrown(error)}`;
  }
  const source = toolSource(namespace);
  const entry = source[task.kind];
  if (typeof entry !== 'function') return `the tool module has no ${task.kind} function`;
  return (entry as Entry).bind(source);
}

export default async function callTool(task: CallTask): Promise<CallReply | null> {
  if (task.kind === 'wake') return null;
  const call: ActiveCall = {
    task,
    logs: [],
    logBytes: 0,
    droppedLogBytes: 0,
    timeouts: undefined,
    immediates: undefined,
    progressSent: 0,
    tmpDirMade: false,
    ended: undefined,
    signal: undefined,
    startedAt: performance.now(),
    timedOut: false,
  };
  active = call;
  // The host counts the call's timeout from this moment.
  stampCallStart(settings.starts, task);

  let reply: CallReply;
  try {
    const entry = await loadEntry(task);
    if (typeof entry === 'string') {
      reply = failure(call, 'TOOL_LOAD_FAILED', entry);
    } else {
      const ctx = contextFor(call);
      let value: unknown;
      let thrown: { error: unknown } | undefined;
      try {
        value = task.kind === 'run' ? await entry(task.args, ctx) : await entry(ctx);
      } catch (error) {
        thrown = { error };
      }
      // One turn of the event loop lets a rejection the tool left behind surface as this call's fault.
      await new Promise((resolve) => original.setImmediate(resolve));
      if (call.timedOut) {
        reply = failure(call, 'TOOL_TIMEOUT', `tool timed out after ${task.timeoutMs} ms`);
      } else if (thrown !== undefined) {
        const { code, message } = thrownFailure(thrown.error);
        reply = failure(call, code, message);
      } else {
        const encoded = encodeResult(value, settings.maxResultBytes);
        reply = encoded.ok
          ? {
              ...encoded,
              logs: call.logs,
              droppedLogBytes: call.droppedLogBytes,
              progressSent: call.progressSent,
            }
          : failure(call, encoded.error.code, encoded.error.message);
      }
    }
  } finally {
    for (const handle of call.timeouts ?? []) original.clearTimeout(handle);
    for (const handle of call.immediates ?? []) original.clearImmediate(handle);
    call.ended?.abort(CALL_ENDED);
    active = undefined;
    if (call.tmpDirMade) {
      try {
        rmSync(callTmpDir(settings, task), { recursive: true, force: true, maxRetries: 2 });
      } catch {
        // The reply matters more than the cleanup; the host removes its whole tmp root on close.
      }
    }
  }
  return reply;
}

function failure(call: ActiveCall, code: ToolErrorCode, message: string): CallReply {
  return {
    ok: false,
    error: { code, message },
    logs: call.logs,
    droppedLogBytes: call.droppedLogBytes,
    progressSent: call.progressSent,
  };
}
