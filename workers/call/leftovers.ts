/**
 * What a tool leaves queued when its call returns: ticks (`process.nextTick`) and promise rejections
 * nobody handles. Node runs the ticks and checks the rejections when the microtasks drain, on the
 * way back to the event loop; piscina's worker waits for its next task in `Atomics.wait`, inside a
 * microtask, and takes no such way back between calls. So they are run here, before the call's
 * reply is built: a rejection still unhandled then is this call's `TOOL_UNHANDLED_REJECTION` (see
 * faults.ts), not a later call's.
 *
 * Through `process._tickCallback` (Node's `runNextTicks`), taken before any tool code runs, and not
 * through a turn of the event loop: a turn returns the worker to libuv, after which every task the
 * host posts also wakes the worker's loop (with the turn, a pool of one thread made 2.3 times the
 * epoll waits and 2.8 times the eventfd writes per call).
 */
import { original } from './timers.js';

const apply = Reflect.apply;
// Node wraps it to warn (DEP0134) under `--pending-deprecation`, which a worker started with its own
// `execArgv` (as every one of toolhost's is) doesn't take from the host's command line or NODE_OPTIONS.
const runNextTicks = (process as unknown as { _tickCallback?: unknown })._tickCallback;

/**
 * Microtask hops the tool's leftover chains get before the check: each `await` lets everything
 * queued before it run. From inside a microtask no code can wait for the queue to drain: a chain
 * longer than this that rejects unhandled is reported at a later call's check, as that call's fault
 * (the worker ends either way).
 */
const LEFTOVER_HOPS = 16;

/**
 * Runs what the tool left queued; a tick that throws is `crashed` (an uncaught exception, as it
 * would be at the loop's turn). A Node without `process._tickCallback` takes a turn of the loop.
 */
export async function settleLeftovers(crashed: (error: unknown) => never): Promise<void> {
  if (typeof runNextTicks !== 'function') {
    await new Promise((resolve) => original.setImmediate(resolve));
    return;
  }
  for (let hop = 0; hop < LEFTOVER_HOPS; hop += 1) await undefined;
  try {
    apply(runNextTicks, process, []);
  } catch (error) {
    crashed(error);
  }
}
