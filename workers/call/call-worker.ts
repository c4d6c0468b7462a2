/**
 * The call worker: piscina's handler for every call of one trust domain (package). Tool modules are
 * imported per task, never as the pool's `filename`, so a module that throws at load is one failed
 * call and not a wedged pool. Everything the tool produces is encoded here, so what crosses to the
 * host is plain data of bounded size; the host checks it all again, since tool code shares this
 * realm and could have changed any of it.
 */
import { rmSync } from 'node:fs';
import { threadId, workerData } from 'node:worker_threads';
import { encodeResult } from '../../src/boundary/encode-result.js';
import { describeThrown, type ToolErrorCode } from '../../src/boundary/errors.js';
import {
  type CallReply,
  type CallSettings,
  type CallTask,
  callTmpDir,
  WORKER_MESSAGE_TAG,
  type WorkerMessage,
} from '../../src/boundary/protocol.js';
import { logBytes } from '../../src/boundary/reply-size.js';
import { truncate } from '../../src/boundary/sanitize.js';
import { accessDenied } from '../guard/access-denied.js';
import { hardenWorker } from '../guard/harden.js';
import { lockdown, takePrivateChannel } from '../guard/lockdown.js';
import { toolSource } from '../tool-exports.js';
import { type ActiveCall, newCall, setActiveCall } from './active-call.js';
import { installCapture } from './capture.js';
import { contextFor, progressOf } from './context.js';
import { installFaultHandlers, toolStack } from './faults.js';
import { logNotesOf, setLogChannel } from './forward-logs.js';
import { replySeal } from './own-replies.js';
import { inTurn, setClaims } from './queue.js';
import { clearCallTimers, installTimerTracking, original } from './timers.js';

/**
 * `permissionTier`: the tier whose permission flags this worker runs under, named in its refusals;
 * `claims`: the memory of queued calls' claims, shared with the host (see queue.ts).
 */
type CallWorkerData = CallSettings & {
  allowAddons: boolean;
  permissionTier?: 'strict' | 'process';
  claims?: SharedArrayBuffer;
};

// First of all, before anything a tool could replace: the line to the host.
const channel = takePrivateChannel();
const post = (message: WorkerMessage) => channel.post(message);
post({ tag: WORKER_MESSAGE_TAG, type: 'hello', threadId, osThreadId: channel.osThreadId });
setLogChannel(post);

const given = workerData as CallWorkerData;
const settings: Readonly<CallWorkerData> = Object.freeze({
  dataDir: String(given.dataDir),
  tmpDir: String(given.tmpDir),
  maxResultBytes: Number(given.maxResultBytes),
  maxLogChars: Number(given.maxLogChars),
  allowAddons: given.allowAddons === true,
  permissionTier: given.permissionTier === 'process' ? 'process' : 'strict',
});
// Out of tool code's reach: a tool that could write a claim could start or drop its own package's
// queued calls.
setClaims(given.claims);
delete given.claims;
// A sandboxed package held to a list of hosts: its way out is its proxy, set up before hardening
// freezes what the agents replace and before any tool code runs. The module is named by the host
// (as tool modules are), so this file imports nothing of src/ but the boundary.
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
installFaultHandlers(post, process.exit.bind(process));

// A reply the host would refuse as over its caps (measured differently there) never crosses: about
// the result's bytes and the logs' characters (up to 3 bytes each in JSON), with room to spare.
const maxReplyBytes = 2 * (settings.maxResultBytes + 3 * settings.maxLogChars) + 65_536;
// The replies this worker builds of nothing but what it checked cross without a second walk.
const seal = replySeal({ maxLogChars: settings.maxLogChars, maxReplyBytes });
const lockdownOptions = Object.freeze({ maxReplyBytes, vouchesFor: seal.vouchesFor });

/** What a throw means: a stack overflow and a refusal of the strict tier get codes of their own. */
function thrownFailure(error: unknown): { code: ToolErrorCode; message: string } {
  const message = describeThrown(error);
  if (error instanceof RangeError && message.includes('Maximum call stack size exceeded')) {
    return { code: 'TOOL_STACK_OVERFLOW', message };
  }
  return accessDenied(error, settings.permissionTier) ?? { code: 'TOOL_THREW', message };
}

type Entry = (...args: unknown[]) => unknown;

/**
 * Entries already imported by this worker, by kind and module URL (the URL carries the module's
 * version): looked up without building a key string on every call.
 */
const entries = { run: new Map<string, Entry>(), selftest: new Map<string, Entry>() };

/** A wake task never gets here (callTool answers it first). */
const entryKind = (task: CallTask) => (task.kind === 'selftest' ? 'selftest' : 'run');

/** The module's entry, imported on its first call in this worker. */
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

async function runCall(call: ActiveCall): Promise<CallReply> {
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
  // One turn of the event loop lets a rejection the tool left behind surface as this call's fault.
  // (A rejection of the worker's own, reported after the tool's in the same pass, costs as much.)
  await new Promise((resolve) => original.setImmediate(resolve));
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
  return seal.seal(reply);
}

export default async function callTool(task: CallTask): Promise<CallReply | null> {
  // piscina's start-up is over by the first task; from here on no tool may reach the ports.
  lockdown(lockdownOptions);
  if (task.kind === 'wake') return null;
  return inTurn(task, () => runTask(task));
}

async function runTask(task: CallTask): Promise<CallReply> {
  const call = newCall(task);
  setActiveCall(call);
  try {
    return await runCall(call);
  } catch (error) {
    return failure(call, 'TOOL_THREW', `the call failed in toolhost's worker: ${describeThrown(error)}`);
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
}

/**
 * An error reply. The message is cut as the host would cut it: a message of any length from an
 * honest throw stays that call's `TOOL_THREW`, instead of a reply over the task port's bound.
 */
function failure(call: ActiveCall, code: ToolErrorCode, full: string, thrown?: unknown): CallReply {
  const message = truncate(full);
  const stack = thrown === undefined ? undefined : toolStack(thrown);
  return seal.seal({
    ok: false,
    error: stack === undefined ? { code, message } : { code, message, stack },
    logs: call.logs,
    droppedLogChars: call.droppedLogChars,
    progressSent: progressOf(call),
    logNotesSent: logNotesOf(call),
  });
}
