/**
 * What a tool's `run(args, ctx)` gets as `ctx`: the call's ids, its folders, the names withheld from
 * it, its abort signal (made on first read) and `emit` for progress, capped per call.
 */
import { mkdirSync } from 'node:fs';
import { checkPlainData, MAX_DATA_DEPTH } from '../../src/boundary/plain-data.js';
import {
  type CallSettings,
  callTmpDir,
  MAX_PROGRESS_BYTES,
  MAX_PROGRESS_MESSAGES,
  WORKER_MESSAGE_TAG,
  type WorkerMessage,
} from '../../src/boundary/protocol.js';
import type { JsonValue, ToolContext } from '../../src/boundary/tool-contract.js';
import { type ActiveCall, activeCall } from './active-call.js';
import { original, trackTimeout } from './timers.js';

// How many progress messages each call has posted: kept here, not on the call's record, which a tool
// can reach (it can import the worker module that holds it) and rewrite to post past the cap.
const posted = new WeakMap<ActiveCall, number>();
const { get: weakGet, set: weakSet } = WeakMap.prototype;
const apply = Reflect.apply;

/** How many progress messages the call posted (its reply says so, and the host waits for them). */
export const progressOf = (call: ActiveCall): number =>
  (apply(weakGet, posted, [call]) as number | undefined) ?? 0;

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

/** Most loops withhold nothing: one frozen empty list serves every such call. */
const NONE_WITHHELD: readonly string[] = Object.freeze([]);

/**
 * A call's `ctx`. Its accessors and `emit` live on the class, not on each object: a literal with
 * getters gives every call's object closures of its own, which V8 keeps in hidden classes of their
 * own, in the old generation, until a full collection (measured: about 600 bytes a call promoted,
 * and a worker's collections 10 times as long). The call, its settings and its line to the host are
 * private fields no tool can read; the prototype is frozen, so a tool can't change another call's
 * `ctx` through it.
 */
class CallContext implements ToolContext {
  readonly sessionId: string;
  readonly callId: string;
  readonly dataDir: string;
  readonly withheld: readonly string[];
  readonly #call: ActiveCall;
  readonly #settings: Pick<CallSettings, 'dataDir' | 'tmpDir'>;
  readonly #post: (message: WorkerMessage) => void;

  constructor(
    call: ActiveCall,
    settings: Pick<CallSettings, 'dataDir' | 'tmpDir'>,
    post: (message: WorkerMessage) => void,
  ) {
    const { task } = call;
    this.sessionId = task.sessionId;
    this.callId = task.callId;
    this.dataDir = settings.dataDir;
    this.withheld = task.withheld.length === 0 ? NONE_WITHHELD : Object.freeze([...task.withheld]);
    this.#call = call;
    this.#settings = settings;
    this.#post = post;
  }

  get signal(): AbortSignal {
    return signalFor(this.#call);
  }

  emit(data: JsonValue): void {
    const call = this.#call;
    const sent = progressOf(call);
    if (call !== activeCall() || sent >= MAX_PROGRESS_MESSAGES) return;
    // Progress is advisory: data that is not plain, too deep or too large is dropped here (and
    // would be on the host).
    const check = checkPlainData(data, { maxDepth: MAX_DATA_DEPTH, maxBytes: MAX_PROGRESS_BYTES });
    if (!check.ok) return;
    try {
      this.#post({ tag: WORKER_MESSAGE_TAG, type: 'progress', taskId: call.task.taskId, data });
      apply(weakSet, posted, [call, sent + 1]);
    } catch {
      // Could not be cloned after all: dropped.
    }
  }

  get tmpDir(): string {
    const call = this.#call;
    const path = callTmpDir(this.#settings, call.task);
    if (!call.tmpDirMade) {
      mkdirSync(path, { recursive: true });
      call.tmpDirMade = true;
    }
    return path;
  }
}
Object.freeze(CallContext.prototype);

export function contextFor(
  call: ActiveCall,
  settings: Pick<CallSettings, 'dataDir' | 'tmpDir'>,
  post: (message: WorkerMessage) => void,
): ToolContext {
  return new CallContext(call, settings, post);
}
