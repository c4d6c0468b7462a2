/**
 * What a tool leaves queued when its call returns: ticks (`process.nextTick`), promise rejections
 * nobody handles, and work of its own still under way (a socket, a file request, a timer). Node
 * runs the ticks and checks the rejections when the microtasks drain, on the way back to the event
 * loop; piscina's worker waits for its next task in `Atomics.wait`, inside a microtask, and takes no
 * such way back between calls. So they are run here, before the call's reply is built: a rejection
 * still unhandled then is this call's `TOOL_UNHANDLED_REJECTION` (see faults.ts), not a later
 * call's.
 *
 * A call that leaves nothing under way but toolhost's own ports (most calls) has them run through
 * `process._tickCallback` (Node's `runNextTicks`), taken before any tool code runs, and not through a
 * turn of the event loop: a turn returns the worker to libuv, after which every task the host posts
 * also wakes the worker's loop (with the turn, a pool of one thread made 2.3 times the epoll waits
 * and 2.8 times the eventfd writes per call). A call that leaves work under way takes the turn, in
 * which that work moves on too (a fetch's connection goes back to its pool there, say): without it,
 * nothing of it would run before the worker's next call.
 */
import { original } from './timers.js';

const apply = Reflect.apply;
// Node wraps it to warn (DEP0134) under `--pending-deprecation`, which a worker started with its own
// `execArgv` (as every one of toolhost's is) doesn't take from the host's command line or NODE_OPTIONS.
const runNextTicks = (process as unknown as { _tickCallback?: unknown })._tickCallback;
const activeResources = process.getActiveResourcesInfo as unknown;

/**
 * Microtask hops the tool's leftover chains get before the check: each `await` lets everything
 * queued before it run. From inside a microtask no code can wait for the queue to drain: a chain
 * longer than this that rejects unhandled is reported at a later call's check, as that call's fault
 * (the worker ends either way).
 */
const LEFTOVER_HOPS = 16;

/** The MessagePorts of toolhost and piscina (the task port, the channel to the host). */
let ownPorts: number | undefined;

/** Counts toolhost's own ports; called as the worker's first task starts, before any tool code ran. */
export function countOwnPorts(): void {
  ownPorts ??= typeof activeResources === 'function' ? portsIn(apply(activeResources, process, [])) : 0;
}

function portsIn(resources: unknown): number {
  if (!Array.isArray(resources)) return 0;
  let ports = 0;
  for (const resource of resources) if (resource === 'MessagePort') ports += 1;
  return ports;
}

/** Whether nothing is under way in this worker but toolhost's own ports. */
function nothingUnderWay(): boolean {
  if (typeof activeResources !== 'function' || ownPorts === undefined) return false;
  const resources: unknown = apply(activeResources, process, []);
  if (!Array.isArray(resources) || resources.length > ownPorts) return false;
  for (const resource of resources) if (resource !== 'MessagePort') return false;
  return true;
}

/**
 * Runs what the tool left queued; a tick that throws is `crashed` (an uncaught exception, as it
 * would be at the loop's turn). A call with work under way (before its ticks ran, or started by
 * them), or a Node without `process._tickCallback`, takes a turn of the loop.
 */
export async function settleLeftovers(crashed: (error: unknown) => never): Promise<void> {
  for (let hop = 0; hop < LEFTOVER_HOPS; hop += 1) await undefined;
  if (typeof runNextTicks === 'function' && nothingUnderWay()) {
    try {
      apply(runNextTicks, process, []);
    } catch (error) {
      crashed(error);
    }
    if (nothingUnderWay()) return;
  }
  await new Promise((resolve) => original.setImmediate(resolve));
}
