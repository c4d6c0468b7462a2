/**
 * How a package's process ended, worked out once it is gone: the kernel's memory limit first, then
 * V8 running out of heap (its last stderr says so), then the host's own reason for ending it, else
 * the exit itself. Its running calls and reads answer with what this says.
 */
import { describeExit } from '../sandbox/process-group.js';

/** How a package's process ended: what its running calls answer. */
export interface ChildEnd {
  /**
   * `memory`: over its memory limit; `heap`: out of V8 heap (the tool's, where it runs calls: the
   * message then follows "the tool", `ran out of memory (heap limit 64 MB)`).
   */
  cause: 'memory' | 'heap' | 'crashed' | 'protocol' | 'start' | 'ended';
  /** What the process did, to follow "the tool's process" (`was killed (SIGKILL)`). */
  message: string;
}

/** What is known of a process once it is gone. */
export interface ChildEndFacts {
  /** The kernel ended it for going over its memory cgroup's limit. */
  oomKilled: boolean;
  /** Its stderr ended with V8's out-of-heap report. */
  ranOutOfHeap: boolean;
  /** Why the host ended it, if the host did. */
  killed: ChildEnd | undefined;
  /** How it exited, if it was started and its exit was seen. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  memoryMb: number;
  heapMb: number | undefined;
}

/** How the process ended, from what is known of it once it is gone. */
export function childEndOf(facts: ChildEndFacts): ChildEnd {
  if (facts.oomKilled) return { cause: 'memory', message: `ran out of memory (limit ${facts.memoryMb} MB)` };
  if (facts.killed === undefined && facts.ranOutOfHeap) {
    const { heapMb } = facts;
    return {
      cause: 'heap',
      message: `ran out of memory${heapMb === undefined ? '' : ` (heap limit ${heapMb} MB)`}`,
    };
  }
  if (facts.killed !== undefined) return facts.killed;
  const { code = null, signal = null } = facts.exit ?? {};
  return { cause: 'crashed', message: describeExit(code, signal) };
}
