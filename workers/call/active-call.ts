/**
 * The call running on this thread right now (a call worker or a package process runs one at a
 * time), shared by its parts: the output capture, the timer tracking and the call itself.
 */
import type { CallTask, CapturedLog } from '../../src/boundary/protocol.js';

export interface ActiveCall {
  task: CallTask;
  logs: CapturedLog[];
  /** Characters kept in `logs`. */
  logChars: number;
  droppedLogChars: number;
  /** Timers the call started (made on first use: most calls start none). */
  timeouts: Set<NodeJS.Timeout> | undefined;
  immediates: Set<NodeJS.Immediate> | undefined;
  tmpDirMade: boolean;
  /** Aborts when the call ends: it ends the promise timers the call started (made on first use). */
  ended: AbortController | undefined;
  /** `ctx.signal`'s controller (made on first read of `ctx.signal`). */
  signal: AbortController | undefined;
  startedAt: number;
  timedOut: boolean;
}

let current: ActiveCall | undefined;

export function activeCall(): ActiveCall | undefined {
  return current;
}

export function setActiveCall(call: ActiveCall | undefined): void {
  current = call;
}

export function newCall(task: CallTask): ActiveCall {
  return {
    task,
    logs: [],
    logChars: 0,
    droppedLogChars: 0,
    timeouts: undefined,
    immediates: undefined,
    tmpDirMade: false,
    ended: undefined,
    signal: undefined,
    startedAt: performance.now(),
    timedOut: false,
  };
}
