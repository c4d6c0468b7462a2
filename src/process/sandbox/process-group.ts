/**
 * A package's process as a process group: ended as a whole (what a tool started beside it goes with
 * it), ended when the host exits even without `close()`, and its end described in words.
 */
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/** Every package process still running. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * SIGKILLs a process's whole group (it leads one: it was started detached), and the process. The
 * process itself is signalled through its handle, which Node drops once it has been reaped, so a
 * pid the system has since given to another process is never hit.
 */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
  child.kill('SIGKILL');
}

/** Ends `child` when this process exits, however it exits (one listener for every host). */
export function holdUntilExit(child: ChildProcess): void {
  live.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const running of live) killGroup(running);
  });
}

/** `child` has ended. */
export function letGo(child: ChildProcess): void {
  live.delete(child);
}

/** How a process ended, to follow "the tool's process": `was killed (SIGKILL)`. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal !== null) return `was killed (${signal})`;
  // bwrap reports a command killed by a signal as 128 + the signal's number.
  const name = Object.entries(constants.signals).find(([, number]) => number + 128 === code)?.[0];
  return name === undefined ? `exited with code ${code}` : `was killed (${name})`;
}
