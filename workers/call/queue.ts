/**
 * One call at a time in a worker that piscina may hand a second task while the first runs (see
 * src/calls/pipeline.ts). A task that arrives during a call waits; it starts after the running call
 * has replied and one turn of the event loop has passed (piscina posts a reply in the microtasks
 * after the handler returns, so a queued tool doesn't hold up the reply of the call ahead of it,
 * unless a tool wrote to `process.stdout` itself, which piscina lets drain first), and only if this
 * worker wins its claim: the host may have taken it back to run elsewhere. Nothing here calls what
 * a tool can replace. (A package process's main thread takes its calls the same way; the host sends
 * it one at a time, with no claims.)
 */
import type { CallTask } from '../../src/boundary/protocol.js';
import { original } from './timers.js';

// Taken before any tool code runs: a tool may replace the globals, not these.
const { compareExchange } = Atomics;
const Cells = Int32Array;
const OwnPromise = Promise;

/** Tasks waiting for their turn, oldest first: a list of its own, as a tool can replace Array's methods. */
interface Waiting {
  resume: () => void;
  next: Waiting | undefined;
}

let cells: Int32Array | undefined;
let running = false;
let first: Waiting | undefined;
let last: Waiting | undefined;

/** The claims' memory, shared with the host (once, from workerData, before any tool code). */
export function setClaims(buffer: unknown): void {
  if (buffer instanceof SharedArrayBuffer) cells = new Cells(buffer);
}

/** Whether this worker may start `task`: always, unless it was queued and the host took it back. */
function claimed(task: CallTask): boolean {
  const claim = task.claim;
  if (claim === undefined) return true;
  // Indexed, not destructured: a tool can replace the array iterator.
  const slot = claim[0];
  const ticket = claim[1];
  return cells !== undefined && compareExchange(cells, slot, ticket, -ticket) === ticket;
}

/**
 * Runs `call` for `task` once no other call runs here; null (nothing ran) if the host took it back.
 */
export async function inTurn<T>(task: CallTask, call: () => Promise<T>): Promise<T | null> {
  if (running) {
    await new OwnPromise<void>((resume) => {
      const entry = { resume, next: undefined };
      if (last === undefined) first = entry;
      else last.next = entry;
      last = entry;
    });
    await new OwnPromise((resolve) => original.setImmediate(resolve));
  } else running = true;
  try {
    return claimed(task) ? await call() : null;
  } finally {
    next();
  }
}

/** The call that ran here is over: the next waiting task, if any, takes its turn. */
function next(): void {
  const entry = first;
  if (entry === undefined) {
    running = false;
    return;
  }
  first = entry.next;
  if (first === undefined) last = undefined;
  entry.resume();
}
