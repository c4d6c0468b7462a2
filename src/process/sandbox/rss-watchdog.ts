/**
 * The process tier's memory limit where no cgroup can be made: the host reads the resident memory of
 * a package's process and of every process below it (`VmRSS` in /proc) and kills the lot when the sum
 * goes over `processMemoryMb`. RSS, not address space: V8 reserves far more virtual memory than it
 * uses (a pointer-compression cage, wasm guard regions), so an `RLIMIT_AS` large enough for Node to
 * start would bound nothing useful. A watchdog can be outrun: a process can allocate what it touches
 * in one interval beyond the limit before it is seen (docs/isolation.md, "The process tier").
 */
import { readFileSync } from 'node:fs';
import { descendantsOf } from '../../shared/process-tree.js';

/** How often a busy process is measured (it runs calls). */
export const BUSY_INTERVAL_MS = 50;
/** How often an idle one is (something a tool started may still be running). */
export const IDLE_INTERVAL_MS = 1000;

/** Resident memory of one process, in bytes; 0 when it is gone. */
function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

/** Resident memory of a process and everything below it, in bytes. */
export function treeResidentBytes(pid: number): number {
  let total = residentBytes(pid);
  for (const descendant of descendantsOf(pid)) total += residentBytes(descendant);
  return total;
}

export class RssWatchdog {
  readonly #pid: number;
  readonly #limitBytes: number;
  readonly #onOver: (bytes: number) => void;
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  #stopped = false;

  /** Watches the process `pid` and what it starts; `onOver` runs once, when the sum is over. */
  constructor(pid: number, limitBytes: number, onOver: (bytes: number) => void) {
    this.#pid = pid;
    this.#limitBytes = limitBytes;
    this.#onOver = onOver;
    this.#schedule();
  }

  /** A process running calls is measured often; an idle one now and then. */
  set busy(busy: boolean) {
    if (this.#busy === busy || this.#stopped) return;
    this.#busy = busy;
    clearTimeout(this.#timer);
    this.#check();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => this.#check(), this.#busy ? BUSY_INTERVAL_MS : IDLE_INTERVAL_MS);
    this.#timer.unref();
  }

  #check(): void {
    if (this.#stopped) return;
    const bytes = treeResidentBytes(this.#pid);
    if (bytes > this.#limitBytes) {
      this.stop();
      try {
        this.#onOver(bytes);
      } catch {
        // A timer's callback must not throw into the host; the owner kills the process itself.
      }
      return;
    }
    this.#schedule();
  }
}
