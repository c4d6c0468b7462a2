/**
 * Timers a call starts (`setTimeout`, `setInterval`, `setImmediate`, also through `node:timers` and
 * `node:timers/promises`) are cleared when it ends, so an interval left running can't act inside a
 * later call (an idle piscina worker runs no timers, and would blame the next call for it).
 */
import { syncBuiltinESMExports } from 'node:module';
import timers from 'node:timers';
import timersPromises from 'node:timers/promises';
import { type ActiveCall, activeCall } from './active-call.js';

/** The timer functions as they were before any tool code ran. */
export const original = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  clearImmediate: globalThis.clearImmediate,
};

/** One reason for every call's end: aborting with a fresh DOMException costs a stack trace each time. */
const CALL_ENDED = new Error('the call ended');

export function trackTimeout(call: ActiveCall, handle: NodeJS.Timeout): void {
  call.timeouts ??= new Set();
  call.timeouts.add(handle);
}

/** Clears what the call left running. */
export function clearCallTimers(call: ActiveCall): void {
  for (const handle of call.timeouts ?? []) original.clearTimeout(handle);
  for (const handle of call.immediates ?? []) original.clearImmediate(handle);
  call.ended?.abort(CALL_ENDED);
}

export function installTimerTracking(): void {
  trackCallbackTimers();
  trackPromiseTimers();
  syncBuiltinESMExports();
}

/** Timers a call starts are cleared when it ends, so an interval left running can't act inside a later call. */
function trackCallbackTimers(): void {
  // Both the globals and `node:timers` are wrapped.
  function trackedTimeout(kind: 'setTimeout' | 'setInterval') {
    const start = original[kind];
    return ((...args: Parameters<typeof setTimeout>) => {
      const handle = start(...args);
      const call = activeCall();
      if (call !== undefined) trackTimeout(call, handle);
      return handle;
    }) as typeof setTimeout;
  }
  const trackedImmediate = ((...args: Parameters<typeof setImmediate>) => {
    const handle = original.setImmediate(...args);
    const call = activeCall();
    if (call !== undefined) {
      call.immediates ??= new Set();
      call.immediates.add(handle);
    }
    return handle;
  }) as typeof setImmediate;
  globalThis.setTimeout = trackedTimeout('setTimeout');
  globalThis.setInterval = trackedTimeout('setInterval') as typeof setInterval;
  globalThis.setImmediate = trackedImmediate;
  timers.setTimeout = globalThis.setTimeout;
  timers.setInterval = globalThis.setInterval;
  timers.setImmediate = globalThis.setImmediate;
}

type PromiseTimerOptions = { signal?: AbortSignal; ref?: boolean } | undefined;
/** The options with a signal that also aborts when the running call ends, and that signal. */
function boundToCall(options: PromiseTimerOptions): { options: PromiseTimerOptions; ended?: AbortSignal } {
  const call = activeCall();
  if (call === undefined) return { options };
  call.ended ??= new AbortController();
  const ended = call.ended.signal;
  const signal = options?.signal === undefined ? ended : AbortSignal.any([options.signal, ended]);
  return { options: { ...options, signal }, ended };
}

/** `promise`, except that a rejection because its call ended never settles it. */
function unlessEnded<T>(promise: Promise<T>, ended: AbortSignal | undefined): Promise<T> {
  if (ended === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    promise.then(resolve, (error: unknown) => {
      if (!ended.aborted) reject(error);
    });
  });
}

/**
 * The same for `node:timers/promises`: its timers get a signal that also aborts when the call ends,
 * and a promise whose timer ended that way never settles, as a cleared timer never fires. Left alone,
 * such a timer would fire in a later call (an idle piscina worker runs no timers) and blame it.
 */
function trackPromiseTimers(): void {
  const originalPromises = {
    setTimeout: timersPromises.setTimeout,
    setImmediate: timersPromises.setImmediate,
    setInterval: timersPromises.setInterval,
  };
  timersPromises.setTimeout = ((delay?: number, value?: unknown, options?: PromiseTimerOptions) => {
    const bound = boundToCall(options);
    return unlessEnded(originalPromises.setTimeout(delay, value, bound.options), bound.ended);
  }) as typeof timersPromises.setTimeout;
  timersPromises.setImmediate = ((value?: unknown, options?: PromiseTimerOptions) => {
    const bound = boundToCall(options);
    return unlessEnded(originalPromises.setImmediate(value, bound.options), bound.ended);
  }) as typeof timersPromises.setImmediate;
  timersPromises.setInterval = ((delay?: number, value?: unknown, options?: PromiseTimerOptions) => {
    const bound = boundToCall(options);
    const ticks = originalPromises.setInterval(delay, value, bound.options)[Symbol.asyncIterator]();
    const { ended } = bound;
    if (ended === undefined) return { [Symbol.asyncIterator]: () => ticks };
    const wrapped: AsyncIterableIterator<unknown> = {
      next: () => unlessEnded(ticks.next(), ended),
      return: () => ticks.return?.() ?? Promise.resolve({ done: true, value: undefined }),
      [Symbol.asyncIterator]: () => wrapped,
    };
    return wrapped;
  }) as typeof timersPromises.setInterval;
  timersPromises.scheduler.wait = (delay, options) => timersPromises.setTimeout(delay, undefined, options);
}
