/**
 * The loop's one retry layer. The SDK's own retries are off for every request the loop sends
 * (`maxRetries: 0`), so a request is attempted at most `retries + 1` times, not that times the SDK's.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pRetry from 'p-retry';
import { classifyApiFailure } from './api-failure.js';
import { LoopFault } from './loop-error.js';

/** How the loop retries a request that failed for a transient reason. */
export interface RetryOptions {
  /**
   * Retries after the first attempt; `0` turns retrying off.
   * @default 4
   */
  retries?: number;
  /**
   * The wait before the first retry; it doubles with every retry.
   * @default 1000
   */
  minTimeoutMs?: number;
  /**
   * The longest wait between two attempts. A `retry-after` longer than this ends the retries: the error
   * is thrown (with its conversation) instead of waiting.
   * @default 60000
   */
  maxTimeoutMs?: number;
  /** Called before each wait, for logs and screens. */
  onRetry?: (retry: RetryInfo) => void;
}

/** One retry about to happen. */
export interface RetryInfo {
  /** Why the attempt failed. */
  error: Error;
  /** The attempt that failed, from 1. */
  attemptNumber: number;
  /** Retries left, this one included. */
  retriesLeft: number;
  /** How long the loop waits before the next attempt: the backoff, or the API's `retry-after` if longer. */
  delayMs: number;
}

export interface RetrySettings {
  retries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  onRetry: ((retry: RetryInfo) => void) | undefined;
}

export const DEFAULT_RETRIES = 4;
export const DEFAULT_RETRY_MIN_TIMEOUT_MS = 1000;
export const DEFAULT_RETRY_MAX_TIMEOUT_MS = 60_000;

/**
 * Runs `attempt` until it succeeds, fails for a reason that isn't transient, or runs out of retries.
 * Waits the exponential backoff, or what the API asks in `retry-after-ms` / `retry-after` when that is
 * longer. `signal` stops the waiting.
 */
export function withRetries<T>(
  attempt: () => Promise<T>,
  settings: RetrySettings,
  signal: AbortSignal | undefined,
): Promise<T> {
  return pRetry(attempt, {
    retries: settings.retries,
    factor: 2,
    minTimeout: settings.minTimeoutMs,
    maxTimeout: settings.maxTimeoutMs,
    randomize: false,
    signal,
    shouldRetry: ({ error }) => isTransient(error),
    // p-retry waits the backoff itself; this tops the wait up to what the API asked for, so the wait
    // between attempts is the longer of the two.
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft, retriesConsumed }) => {
      if (retriesLeft === 0 || !isTransient(error)) return;
      const backoffMs = Math.min(settings.minTimeoutMs * 2 ** retriesConsumed, settings.maxTimeoutMs);
      const askedMs = retryAfterMs(error);
      if (askedMs !== undefined && askedMs > settings.maxTimeoutMs) throw error;
      const delayMs = Math.max(backoffMs, askedMs ?? 0);
      if (settings.onRetry !== undefined) {
        try {
          settings.onRetry({ error, attemptNumber, retriesLeft, delayMs });
        } catch (thrown) {
          throw new LoopFault('callback_error', 'retry.onRetry', thrown);
        }
      }
      if (delayMs > backoffMs)
        await delay(delayMs - backoffMs, undefined, signal === undefined ? {} : { signal });
    },
  });
}

/**
 * Overloaded (529), rate limited (429), a server error (5xx), or the connection failed. Read from what
 * the error carries, so errors of any SDK client count (see `api-failure.ts`).
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof LoopFault) return false;
  const failure = classifyApiFailure(error);
  if (failure?.kind === 'connection') return true;
  if (failure?.kind !== 'api') return false;
  if (failure.status !== undefined) return failure.status === 429 || failure.status >= 500;
  // An `error` event inside a stream has no status of its own, only the API's error type.
  return (
    failure.type === 'overloaded_error' || failure.type === 'rate_limit_error' || failure.type === 'api_error'
  );
}

/** The wait the API asked for, in milliseconds: `retry-after-ms`, else `retry-after` (seconds or a date). */
export function retryAfterMs(error: Error): number | undefined {
  const failure = classifyApiFailure(error);
  if (failure?.kind !== 'api') return undefined;
  const milliseconds = failure.header('retry-after-ms');
  if (milliseconds !== undefined) {
    const value = Number.parseFloat(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const header = failure.header('retry-after');
  if (header === undefined) return undefined;
  const seconds = Number.parseFloat(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
