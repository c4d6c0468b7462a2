/**
 * Ending a worker that won't end. `worker.terminate()` stops JavaScript, but not a thread blocked in
 * a system call: a tool's `execFileSync('sleep', ['600'])` keeps its thread (and, at exit, the whole
 * process) waiting for the child. On Linux the kernel lists the child processes each thread started
 * (`/proc/self/task/<tid>/children`), so once a terminated worker has not ended within a bound, its
 * children are killed, which lets the blocking call return and the thread end. Elsewhere, or for a
 * thread blocked on something else (a read from a pipe nobody writes), the worker is let go: the
 * caller moves on, the thread may keep the process from exiting until its call returns.
 */
import type { Worker } from 'node:worker_threads';
import { childrenOfThread, withDescendants } from '../shared/process-tree.js';

/** How long a terminated worker gets to end before its child processes are killed. */
export const END_BOUND_MS = 500;

/** A worker and what the host knows to end it with. */
export interface TrackedWorker {
  worker: Worker;
  /** `worker.threadId`, kept (Node resets it once the worker has exited). */
  threadId: number;
  /** The worker's OS thread id, as it reported before any tool code ran; null when unknown. */
  osThreadId: number | null;
  /** Settles when the worker has exited. */
  exited: Promise<void>;
  hasExited(): boolean;
  /** Reads now the replies the worker posted that piscina has not read yet (see piscina.ts). */
  readReplies?: (() => void) | undefined;
}

export function trackWorker(worker: Worker, osThreadId: number | null = null): TrackedWorker {
  let done = false;
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      done = true;
      resolve();
    });
  });
  return { worker, threadId: worker.threadId, osThreadId, exited, hasExited: () => done };
}

/**
 * Resolves when the worker has exited or `ms` have passed, whichever comes first. The timer holds
 * the event loop open while it runs: a worker piscina let go of between calls is unref'd, and a
 * terminated one's exit may take a moment (tens to hundreds of milliseconds were seen), so with
 * nothing else pending a process whose last work is `await host.close()` ended with the close
 * unsettled (exit code 13 after a top-level await). It is cleared once the worker has exited.
 */
async function exitedWithin(tracked: TrackedWorker, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([tracked.exited, passed]);
  clearTimeout(timer);
}

/**
 * Kills the processes a thread of this process started, and their descendants (a child's own child,
 * `sleep 600 & wait`, holds the output pipe the thread reads as long as it lives), on Linux; returns
 * how many. The whole tree is listed before anything is killed: a killed process's children are
 * reparented and out of reach. (One that was orphaned before this runs is out of reach too.)
 */
export function killChildrenOf(osThreadId: number | null): number {
  // The main thread's children are the host's own, never a tool's.
  if (osThreadId === null || osThreadId === process.pid) return 0;
  const tree = withDescendants(childrenOfThread('self', osThreadId));
  let killed = 0;
  for (const pid of tree) {
    try {
      process.kill(pid, 'SIGKILL');
      killed += 1;
    } catch {
      // Gone already.
    }
  }
  return killed;
}

/**
 * Waits (at most about 2 × `boundMs`, holding the process open meanwhile) for a worker that has been
 * asked to terminate to end, killing the child processes that block it after the first `boundMs`.
 * Never rejects.
 */
export async function ensureEnded(tracked: TrackedWorker, boundMs = END_BOUND_MS): Promise<void> {
  if (tracked.hasExited()) return;
  await exitedWithin(tracked, boundMs);
  if (tracked.hasExited()) return;
  killChildrenOf(tracked.osThreadId);
  await exitedWithin(tracked, boundMs);
  // Still there: let it go, so at least it doesn't hold the event loop open.
  if (!tracked.hasExited()) tracked.worker.unref();
}
