/**
 * What runs one call, wherever tool code runs: a call worker of the worker and strict tiers
 * (call-worker.ts), or the main thread of a package's process in the process tier
 * (process-calls.ts). Before any tool code runs, {@link prepareForTools} puts the guards in place
 * (the egress route, hardening, output capture, timer tracking, fault handlers); then
 * {@link callRunner} runs each task: imports the tool module on its first call, builds `ctx`, runs
 * the tool, and encodes what it returned into a reply of bounded size. Everything the tool produces
 * is encoded here, so what crosses to the host is plain data; the host checks it all again, since
 * tool code shares this realm and could have changed any of it.
 */
import { rmSync } from 'node:fs';
import { encodeResult } from '../../src/boundary/encode-result.js';
import { describeThrown, type ToolErrorCode } from '../../src/boundary/errors.js';
import {
  type CallReply,
  type CallSettings,
  type CallTask,
  callTmpDir,
  type WorkerMessage,
} from '../../src/boundary/protocol.js';
import { logBytes } from '../../src/boundary/reply-size.js';
import { truncate } from '../../src/boundary/sanitize.js';
import { accessDenied, networkRefused } from '../guard/access-denied.js';
import { hardenWorker } from '../guard/harden.js';
import { toolSource } from '../tool-exports.js';
import { type ActiveCall, newCall, setActiveCall } from './active-call.js';
import { installCapture } from './capture.js';
import { contextFor, progressOf } from './context.js';
import { installFaultHandlers, rejectionsReported, toolStack } from './faults.js';
import { logNotesOf, setLogChannel } from './forward-logs.js';
import { clearCallTimers, installTimerTracking, original } from './timers.js';

/** What a runner is given by whoever started it (as a worker's `workerData`, or a process's init). */
export type GivenSettings = CallSettings & { allowAddons: boolean; permissionTier?: 'strict' | 'process' };

/**
 * The settings as the runner keeps them, copied out of what it was given (a tool can reach the
 * given object): `permissionTier` is the tier whose permission flags this code runs under, named in
 * its refusals.
 */
export interface RunnerSettings {
  readonly dataDir: string;
  readonly tmpDir: string;
  readonly maxResultBytes: number;
  readonly maxLogChars: number;
  readonly allowAddons: boolean;
  readonly permissionTier: 'strict' | 'process';
  /** The process tier gave this package no network: a failed connection is its refusal. */
  readonly networkOff: boolean;
}

/**
 * Puts every guard in place before any tool code runs here: a package held to a list of hosts gets
 * its proxy as its way out first (the module is named by the host, as tool modules are, so this file
 * imports nothing of src/ but the boundary), then the hardening that freezes what the agents
 * replace, the output capture, the timer tracking and the fault handlers. `post` is the private line
 * to the host, `exit` Node's own exit, both taken before any tool code could replace them.
 */
export async function prepareForTools(
  given: GivenSettings,
  post: (message: WorkerMessage) => void,
  exit: (code?: number) => never,
): Promise<RunnerSettings> {
  const settings: RunnerSettings = Object.freeze({
    dataDir: String(given.dataDir),
    tmpDir: String(given.tmpDir),
    maxResultBytes: Number(given.maxResultBytes),
    maxLogChars: Number(given.maxLogChars),
    allowAddons: given.allowAddons === true,
    permissionTier: given.permissionTier === 'process' ? 'process' : 'strict',
    networkOff: given.permissionTier === 'process' && given.networkOff === true,
  });
  setLogChannel(post);
  if (given.egress !== undefined) {
    const setup = (await import(String(given.egress.setup))) as {
      routeThroughProxy(route: { socketPath: string; trustCertificates?: string | undefined }): void;
    };
    setup.routeThroughProxy({
      socketPath: String(given.egress.socketPath),
      trustCertificates: given.egress.trustCertificates,
    });
  }
  hardenWorker({ allowAddons: settings.allowAddons });
  installCapture(settings.maxLogChars);
  installTimerTracking();
  installFaultHandlers(post, exit);
  return settings;
}

export interface RunnerOptions<R> {
  settings: RunnerSettings;
  post: (message: WorkerMessage) => void;
  /** Marks a reply this code built of nothing but what it checked (see own-replies.ts). */
  /** What a reply crosses as: the thread tiers' seal (own-replies.ts), or the reply as it is. */
  seal: (reply: CallReply) => R;
}

type Entry = (...args: unknown[]) => unknown;

/** A wake task never gets here (its caller answers it first). */
const entryKind = (task: CallTask) => (task.kind === 'selftest' ? 'selftest' : 'run');

/** Runs tasks one at a time: the caller never starts a task while another runs. */
export function callRunner<R>(options: RunnerOptions<R>): (task: CallTask) => Promise<R> {
  const { settings, post, seal } = options;

  /**
   * Entries already imported here, by kind and module URL (the URL carries the module's version):
   * looked up without building a key string on every call.
   */
  const entries = { run: new Map<string, Entry>(), selftest: new Map<string, Entry>() };

  /** What a throw means: a stack overflow and a refusal of the permission model get codes of their own. */
  function thrownFailure(error: unknown): { code: ToolErrorCode; message: string } {
    const message = describeThrown(error);
    if (error instanceof RangeError && message.includes('Maximum call stack size exceeded')) {
      return { code: 'TOOL_STACK_OVERFLOW', message };
    }
    return (
      accessDenied(error, settings.permissionTier) ??
      (settings.networkOff ? networkRefused(error) : undefined) ?? { code: 'TOOL_THREW', message }
    );
  }

  /** The module's entry, imported on its first call here. */
  async function loadEntry(task: CallTask): Promise<Entry | string> {
    const kind = entryKind(task);
    let namespace: Record<string, unknown>;
    try {
      namespace = (await import(task.moduleUrl)) as Record<string, unknown>;
    } catch (error) {
      return `the tool module failed to load: ${describeThrown(error)}`;
    }
    const source = toolSource(namespace);
    const entry = source[task.kind];
    if (typeof entry !== 'function') return `the tool module has no ${task.kind} function`;
    const bound = (entry as Entry).bind(source);
    entries[kind].set(task.moduleUrl, bound);
    return bound;
  }

  /**
   * An error reply. The message is cut as the host would cut it: a message of any length from an
   * honest throw stays that call's `TOOL_THREW`, instead of a reply over the line's bound.
   */
  function failure(call: ActiveCall, code: ToolErrorCode, full: string, thrown?: unknown): R {
    const message = truncate(full);
    const stack = thrown === undefined ? undefined : toolStack(thrown);
    return seal({
      ok: false,
      error: stack === undefined ? { code, message } : { code, message, stack },
      logs: call.logs,
      droppedLogChars: call.droppedLogChars,
      progressSent: progressOf(call),
      logNotesSent: logNotesOf(call),
    });
  }

  async function runCall(call: ActiveCall): Promise<R> {
    const { task } = call;
    // Known entries are taken at once: an async lookup would cost every call a promise and a turn.
    const entry = entries[entryKind(task)].get(task.moduleUrl) ?? (await loadEntry(task));
    if (typeof entry === 'string') return failure(call, 'TOOL_LOAD_FAILED', entry);
    const ctx = contextFor(call, settings, post);
    let value: unknown;
    let thrown: { error: unknown } | undefined;
    try {
      value = task.kind === 'run' ? await entry(task.args, ctx) : await entry(ctx);
    } catch (error) {
      thrown = { error };
    }
    // A rejection the tool left behind surfaces as this call's fault before it replies. Immediates
    // the tool scheduled (an HTTP client returning its connection to the pool, say) run within the
    // call, before its timers are cleared: a turn of the event loop waits for them; a call that
    // scheduled none waits for Node's report of its rejections alone, which costs no turn.
    await (call.immediates === undefined
      ? rejectionsReported()
      : new Promise((resolve) => original.setImmediate(resolve)));
    if (call.timedOut) return failure(call, 'TOOL_TIMEOUT', `tool timed out after ${task.timeoutMs} ms`);
    if (thrown !== undefined) {
      const { code, message } = thrownFailure(thrown.error);
      return failure(call, code, message, thrown.error);
    }
    // The cap covers everything that crosses: what the tool printed leaves that much less for its result.
    const encoded = encodeResult(value, Math.max(0, settings.maxResultBytes - logBytes(call.logs)));
    if (!encoded.ok) return failure(call, encoded.error.code, encoded.error.message);
    // A literal, not a spread: on Node 20 a spread with properties after it costs microseconds.
    const reply: CallReply = {
      ok: true,
      content: encoded.content,
      isError: encoded.isError,
      cutBytes: encoded.cutBytes,
      logs: call.logs,
      droppedLogChars: call.droppedLogChars,
      progressSent: progressOf(call),
      logNotesSent: logNotesOf(call),
    };
    if (encoded.details !== undefined) reply.details = encoded.details;
    if (encoded.structuredContent !== undefined) reply.structuredContent = encoded.structuredContent;
    return seal(reply);
  }

  return async function runTask(task: CallTask): Promise<R> {
    const call = newCall(task);
    setActiveCall(call);
    try {
      return await runCall(call);
    } catch (error) {
      return failure(call, 'TOOL_THREW', `the call failed in toolhost's own code: ${describeThrown(error)}`);
    } finally {
      clearCallTimers(call);
      setActiveCall(undefined);
      if (call.tmpDirMade) {
        try {
          rmSync(callTmpDir(settings, task), { recursive: true, force: true, maxRetries: 2 });
        } catch {
          // The reply matters more than the cleanup; the host removes its whole tmp root on close.
        }
      }
    }
  };
}
