/**
 * What a call prints, forwarded to the host while the call runs, for a call whose task asks for it
 * (someone on the host listens). Writes are gathered and posted as one `log` message at most every
 * {@link LOG_NOTE_INTERVAL_MS}, at most {@link MAX_LOG_NOTES} per call: a tool printing in a tight
 * loop costs the host a message per interval, and what is past the count goes with the reply, so
 * nothing within the call's character cap is lost. What was posted leaves the call's `logs`, so the
 * reply never carries a line twice.
 */
import {
  LOG_NOTE_INTERVAL_MS,
  MAX_LOG_NOTES,
  WORKER_MESSAGE_TAG,
  type WorkerMessage,
} from '../../src/boundary/protocol.js';
import { type ActiveCall, activeCall } from './active-call.js';
import { original } from './timers.js';

interface Forwarding {
  sent: number;
  scheduled: boolean;
  lastPostAt: number;
}

// Kept here, not on the call's record, which a tool can reach (it can import the module that holds
// it) and rewrite to post past the cap; the WeakMap's methods are taken before any tool code runs.
const forwarding = new WeakMap<ActiveCall, Forwarding>();
const { get: weakGet, set: weakSet } = WeakMap.prototype;
const apply = Reflect.apply;
const stateOf = (call: ActiveCall): Forwarding | undefined =>
  apply(weakGet, forwarding, [call]) as Forwarding | undefined;
const clock = performance.now.bind(performance);

let post: ((message: WorkerMessage) => void) | undefined;

/** Where `log` messages go: the worker's private line to the host. */
export function setLogChannel(send: (message: WorkerMessage) => void): void {
  post = send;
}

/** How many `log` messages the call posted (its reply says so, and the host waits for them). */
export function logNotesOf(call: ActiveCall): number {
  return stateOf(call)?.sent ?? 0;
}

/** The call printed: forward it soon, if its task asks and it may still post. */
export function forwardSoon(call: ActiveCall): void {
  if (call.task.forwardLogs !== true || post === undefined) return;
  let state = stateOf(call);
  if (state === undefined) {
    state = { sent: 0, scheduled: false, lastPostAt: Number.NEGATIVE_INFINITY };
    apply(weakSet, forwarding, [call, state]);
  }
  if (state.scheduled || state.sent >= MAX_LOG_NOTES) return;
  state.scheduled = true;
  const wait = state.lastPostAt + LOG_NOTE_INTERVAL_MS - clock();
  // After the write's own turn of the event loop, so a burst of writes is one message.
  if (wait <= 0) original.setImmediate(() => flush(call, state));
  else original.setTimeout(() => flush(call, state), wait);
}

function flush(call: ActiveCall, state: Forwarding): void {
  state.scheduled = false;
  // A call that ended meanwhile sent what was left with its reply.
  if (activeCall() !== call || call.logs.length === 0 || post === undefined) return;
  const logs = call.logs;
  try {
    post({ tag: WORKER_MESSAGE_TAG, type: 'log', taskId: call.task.taskId, logs });
  } catch {
    // Not posted (a tool replaced what cloning uses): the lines stay for the reply.
    return;
  }
  call.logs = [];
  state.sent += 1;
  state.lastPostAt = clock();
}
