/**
 * Faults outside the tool's own promise: an uncaught exception in a callback, an unhandled
 * rejection, `process.exit`. Each leaves the thread the tool runs on in an unknown state: it is
 * reported to the host (as the running call's, or as no call's), then that thread ends: a worker,
 * which piscina replaces (Node delivers the report before the worker's 'exit' event), or a package
 * process's main thread, whose report is written before the process exits.
 */
import { join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeThrown, type ToolErrorCode } from '../../src/boundary/errors.js';
import { WORKER_MESSAGE_TAG, type WorkerMessage } from '../../src/boundary/protocol.js';
import { truncate } from '../../src/boundary/sanitize.js';
import { stackOf, toolFrames } from '../../src/boundary/stack-frames.js';
import { activeCall } from './active-call.js';
import { original } from './timers.js';

/**
 * Code that is not the tool's: toolhost's own (dist/) and piscina's (found from toolhost's own folder,
 * not resolved: resolving would probe files the strict tier may not let this worker see), as paths
 * and as file URLs.
 */
const OWN = fileURLToPath(new URL('../../', import.meta.url));
const NOT_THE_TOOL = [
  OWN,
  join(OWN, '..', 'node_modules', 'piscina', 'dist'),
  join(OWN, '..', '..', 'piscina', 'dist'),
]
  .map((folder) => (folder.endsWith(sep) ? folder : `${folder}${sep}`))
  .flatMap((folder) => [folder, pathToFileURL(folder).href]);

/** The tool's frames of an error's stack (for the host only), or undefined when there are none. */
export function toolStack(error: unknown): string | undefined {
  const frames = toolFrames(stackOf(error), NOT_THE_TOOL);
  return frames.length === 0 ? undefined : frames.join('\n');
}

// Taken before any tool code runs: a tool may replace these, not the copies.
const OwnPromise = Promise;
const rejected = Promise.reject.bind(Promise);
const ownEmit = process.emit;
const apply = Reflect.apply;

/** True, and the call waiting on it resumes, if `reason` is one of the runner's marks. */
let settleMark: (reason: unknown) => boolean;

/**
 * A rejection of the runner's own, left unhandled on purpose when a call's tool returns (see
 * {@link rejectionsReported}). It is never a fault, and no listener of the tool's sees it. Its
 * private field is its brand: no other object passes for one. It has no method: a tool that got
 * hold of one (by attaching a handler to every promise it can find, say) can't resume the call.
 */
class RejectionMark {
  readonly #resume: () => void;

  constructor(resume: () => void) {
    this.#resume = resume;
  }

  static {
    settleMark = (reason) => {
      if (typeof reason !== 'object' || reason === null || !(#resume in reason)) return false;
      (reason as RejectionMark).#resume();
      return true;
    };
  }
}
Object.freeze(RejectionMark.prototype);

/**
 * Resolves once Node has reported every rejection left unhandled so far, so that one the tool left
 * behind is its call's fault (the thread ends, and the call never replies). Node reports them in
 * the order they happened, once the microtasks have run: a mark rejected now comes after any
 * rejection the tool left, even one a few microtasks later (reported in the same pass, before the
 * call resumes). This costs no turn of the event loop (a turn cost a call 7 µs of CPU on Node 24).
 * When a tool has replaced `process.emit` (the mark could be dropped there, and end the thread as
 * an uncaught exception), or the call runs in a domain, no mark is sent: the wait ends with a turn of
 * the event loop, as it always did. What the turn ran and this doesn't: a completion already queued
 * when the tool returned (a message on a port of its own, a finished WebCrypto job) now runs after
 * the reply; a fault it causes ends the worker as no call's, or the next call's there, as one that
 * came a turn later always did. (A call whose tool scheduled an immediate still waits the turn:
 * call-runner.ts.)
 */
export function rejectionsReported(): Promise<void> {
  return new OwnPromise<void>((resolve) => {
    original.setImmediate(resolve);
    // Only through the emit installed here, and outside a domain (Node hands a domain the
    // rejections made in it); otherwise the turn alone, as a call waited before.
    if (process.emit === emitWithoutMarks && (process as { domain?: unknown }).domain == null) {
      void rejected(new RejectionMark(resolve));
    }
  });
}

/**
 * `process.emit` as the tool finds it: Node's own, except that the runner's marks go no further
 * (a tool's `unhandledRejection` listener, an error reporter's say, would see one on every call).
 * Node reports an unhandled rejection through `process.emit`, and a mark counts as handled, even
 * when the tool removed every listener.
 */
function emitWithoutMarks(this: NodeJS.Process, event: string | symbol, ...args: unknown[]): boolean {
  if ((event === 'unhandledRejection' || event === 'uncaughtException') && settleMark(args[0])) {
    return true;
  }
  return apply(ownEmit, this, [event, ...args]) as boolean;
}

/**
 * Reports faults on `post` and ends the worker with `exit` (Node's own, taken before any tool code
 * could replace it); `process.exit` itself becomes a fault.
 */
export function installFaultHandlers(
  post: (message: WorkerMessage) => void,
  exit: (code?: number) => never,
): void {
  function fault(code: ToolErrorCode, describe: () => string, thrown?: unknown): void {
    let message: string;
    let stack: string | undefined;
    try {
      message = truncate(describe());
      stack = toolStack(thrown);
    } catch {
      // Tool code can have replaced what describing a fault uses (String.prototype.split, say).
      message = 'a fault that could not be described';
    }
    const call = activeCall();
    try {
      post({
        tag: WORKER_MESSAGE_TAG,
        type: 'fault',
        taskId: call?.task.taskId ?? null,
        error: stack === undefined ? { code, message } : { code, message, stack },
        logs: call?.logs ?? [],
      });
    } catch {
      // The host still sees the worker end.
    }
  }
  process.emit = emitWithoutMarks as typeof process.emit;
  process.on('uncaughtException', (error) => {
    fault('TOOL_CRASHED', () => `uncaught exception: ${describeThrown(error)}`, error);
    exit(70);
  });
  process.on('unhandledRejection', (reason) => {
    fault('TOOL_UNHANDLED_REJECTION', () => `unhandled rejection: ${describeThrown(reason)}`, reason);
    exit(70);
  });
  process.exit = ((code?: number | string | null) => {
    // Node's own exit paths (its fatal-exception handler, when a tool removed the listener above) set
    // `_exiting` first and end the thread for themselves: in a worker Node reports to the host (a
    // second report would race it there); in a package process the host sees the process exit.
    if ((process as unknown as { _exiting?: unknown })._exiting !== true) {
      fault('TOOL_EXITED', () => `the tool called process.exit(${String(code ?? '')})`);
    }
    exit((code ?? 0) as number);
  }) as typeof process.exit;
}
