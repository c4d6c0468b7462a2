/**
 * Processes a selftest run left behind: every process below this one (Linux's `/proc` lists each
 * thread's children, so a tool's child stays findable however the worker that started it ended),
 * but the package processes the process tier runs itself. A selftest has answered by the time this
 * is asked, so whatever it started and still runs was left running: it is listed for the verdict
 * and ended before anything is looked at for the last time.
 *
 * Out of reach: a process that left the tree (a double fork reparents it to init) in the worker
 * tier. The process tier's pid namespace (with bubblewrap) holds those too, and is ended as a whole
 * when the host closes; strict starts no process at all.
 */
import { readFileSync } from 'node:fs';
import { escapeControl, truncate } from '../../boundary/sanitize.js';
import { descendantsOf } from '../../calls/thread-reaper.js';
import { CHILD_MAIN } from '../../process/sandbox.js';

/** A process left running, as the report names it. */
export interface LeftoverProcess {
  pid: number;
  /** Its command line (the tool's choice: escaped, cut to 200 characters). */
  command: string;
}

/** How much of a command line is shown. */
const SHOWN_COMMAND = 200;

/** The processes below this one that are neither ended (zombies) nor the host's own package processes. */
export function leftoverProcesses(): LeftoverProcess[] {
  const left: LeftoverProcess[] = [];
  for (const pid of descendantsOf(process.pid)) {
    const argv = commandLine(pid);
    // Gone meanwhile, or ended and waiting to be reaped: it runs nothing any more.
    if (argv === undefined || isZombie(pid)) continue;
    // The process tier's own: bubblewrap and the package process it starts both name the entry point.
    if (argv.includes(CHILD_MAIN)) continue;
    left.push({ pid, command: truncate(escapeControl(argv.join(' ')), SHOWN_COMMAND) });
  }
  return left;
}

/**
 * SIGKILLs the processes listed. The whole tree was listed before this runs: a killed parent's
 * children are reparented and would be out of reach. A pid that ended meanwhile is skipped.
 */
export function endProcesses(processes: readonly LeftoverProcess[]): void {
  for (const { pid } of processes) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended already.
    }
  }
}

/** Lists what is left and ends it; returns what was ended. */
export function endLeftoverProcesses(): LeftoverProcess[] {
  const left = leftoverProcesses();
  endProcesses(left);
  return left;
}

function commandLine(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((part) => part !== '');
  } catch {
    return undefined;
  }
}

function isZombie(pid: number): boolean {
  try {
    // The state follows the command name in parentheses, which may itself hold ") ".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}
