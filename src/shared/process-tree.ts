/**
 * The process tree as Linux's /proc shows it: the threads of a process and the children each thread
 * started (`/proc/<pid>/task/<tid>/children`). Elsewhere, or for a process already gone, empty.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The thread ids of a process, or none. */
export function threadsOf(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
}

/** The pids one thread of a process started (`tid` defaults to the process's main thread). */
export function childrenOfThread(pid: number | 'self', tid: number | string): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
      .split(/\s+/)
      .filter((part) => /^\d+$/.test(part))
      .map(Number);
  } catch {
    return [];
  }
}

/** A process's children, over all its threads. */
export function childrenOf(pid: number): number[] {
  return threadsOf(pid).flatMap((tid) => childrenOfThread(pid, tid));
}

/** Every process below `pid` (its children, theirs, …), at most 10 000. */
export function descendantsOf(pid: number): number[] {
  return withDescendants(childrenOf(pid));
}

/** `roots` and every process below them, each once, at most 10 000. */
export function withDescendants(roots: readonly number[]): number[] {
  const found: number[] = [];
  const seen = new Set<number>();
  const queue = [...roots];
  while (queue.length > 0 && found.length < 10_000) {
    const next = queue.shift() as number;
    if (seen.has(next)) continue;
    seen.add(next);
    found.push(next);
    queue.push(...childrenOf(next));
  }
  return found;
}
