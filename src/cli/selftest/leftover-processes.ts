/**
 * Processes a selftest run left behind: every process below this one (Linux's `/proc` lists each
 * thread's children, so a tool's child stays findable however the worker that started it ended;
 * an orphan is adopted by the nearest ancestor that reaps, which in the sandbox is the package's own
 * pid 1), but the package processes the process tier runs itself. A selftest has answered by the time this
 * is asked, so whatever it started and still runs was left running: it is listed for the verdict
 * and ended before anything is looked at for the last time.
 *
 * Out of reach: a process that left the tree (a double fork reparents it to init) in the worker
 * tier. The process tier's pid namespace (with bubblewrap) holds those too, and is ended as a whole
 * when the host closes; strict starts no process at all.
 */
import { readFileSync } from 'node:fs';
import { escapeControl, truncate } from '../../boundary/sanitize.js';
import { CHILD_MAIN } from '../../process/child/child-entry.js';
import { childrenOf, childrenOfThread, threadsOf } from '../../shared/process-tree.js';

/** A process left running, as the report names it. */
export interface LeftoverProcess {
  pid: number;
  /** Its command line (the tool's choice: escaped, cut to 200 characters). */
  command: string;
}

/** How much of a command line is shown. */
const SHOWN_COMMAND = 200;

/**
 * The processes below this one that are still running and are not the host's own. A tool starts
 * its processes from its worker's thread; the host starts the process tier's package processes
 * from the main thread, and those (bubblewrap and the package process, both naming the tier's
 * entry point; one ending, whose command line is already gone; one just forked, still named as
 * this process) are passed over, while everything they started is a tool's.
 */
export function leftoverProcesses(): LeftoverProcess[] {
  const left: LeftoverProcess[] = [];
  const seen = new Set<number>();
  const own = commandLine(process.pid) ?? [];
  const visit = (pid: number, startedByHost: boolean) => {
    if (seen.has(pid) || seen.size >= MAX_PROCESSES) return;
    seen.add(pid);
    const argv = commandLine(pid);
    // Gone meanwhile, or ended and waiting to be reaped: it runs nothing any more.
    if (argv === undefined || isZombie(pid)) return;
    const hosts = startedByHost && (argv.length === 0 || argv.includes(CHILD_MAIN) || sameCommand(argv, own));
    if (!hosts) left.push({ pid, command: truncate(escapeControl(argv.join(' ')), SHOWN_COMMAND) });
    for (const child of childrenOf(pid)) visit(child, hosts);
  };
  for (const tid of threadsOf(process.pid)) {
    for (const child of childrenOfThread(process.pid, tid)) visit(child, tid === String(process.pid));
  }
  return left;
}

/** Processes looked at per listing at most (a fork bomb can't make the listing endless). */
const MAX_PROCESSES = 10_000;

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

function sameCommand(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((part, index) => part === b[index]);
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
