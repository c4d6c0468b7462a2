/**
 * Node's flags for a package process that runs calls: its tools run on its main thread, so the
 * bounds a call worker gets from `resourceLimits` are the process's own flags here. A process that
 * runs out of that heap is ended by V8 (and its call answers `TOOL_OUT_OF_MEMORY`, see
 * domain-child.ts); its stack is the worker's, within what the system gives a main thread.
 */
import { readFileSync } from 'node:fs';
import type { PoolLimits } from '../../calls/pool-workers.js';

/** The most V8 may take of the main thread's stack: half the system's limit (V8 needs headroom beyond it). */
const STACK_SHARE = 0.5;
/** Where the system's stack limit can't be read (not Linux). */
const DEFAULT_MAX_STACK_KB = 4096;

let maxStackKb: number | undefined;

/** Half the soft stack limit this process (and so its children) has, in KiB. */
function readMaxStackKb(): number {
  try {
    const line = /^Max stack size\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (line?.[1] === 'unlimited') return DEFAULT_MAX_STACK_KB;
    const bytes = Number(line?.[1]);
    return Number.isSafeInteger(bytes) && bytes > 0
      ? Math.floor((bytes / 1024) * STACK_SHARE)
      : DEFAULT_MAX_STACK_KB;
  } catch {
    return DEFAULT_MAX_STACK_KB;
  }
}

/**
 * `execArgv` (its tier's flags, as a worker would get them: the permission model's grants where
 * there is no sandbox) with the worker's heap and stack bounds.
 */
export function callProcessFlags(
  limits: Pick<PoolLimits, 'heapMb' | 'stackMb'>,
  execArgv: string[],
): string[] {
  maxStackKb ??= readMaxStackKb();
  const stackKb = Math.max(256, Math.min(limits.stackMb * 1024, maxStackKb));
  return [...execArgv, `--max-old-space-size=${limits.heapMb}`, `--stack-size=${stackKb}`];
}
