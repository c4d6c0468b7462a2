/**
 * `ctx.emit(data)` → `notifications/progress`. The host emits one `progress` event per message for
 * every call; a {@link ProgressRouter} holds one listener on the host and hands each event to the
 * call that asked for progress (the client sent a `progressToken`), so a thousand calls in flight
 * don't mean a thousand listeners.
 */

import type { JsonValue } from '../boundary/tool-contract.js';
import type { ToolProgressEvent } from '../host/events.js';
import type { ToolHost } from '../host/tool-host.js';

/** The part of a ToolHost the router listens to. */
export type ProgressSource = Pick<ToolHost, 'on' | 'off'>;

/** What a progress notification carries besides its token. */
export interface ProgressParams {
  progress: number;
  total?: number;
  message?: string;
}

/** Longest `message` sent: progress is advisory, and a client shows it in one line. */
const MAX_MESSAGE_CHARS = 1000;

/** One listener on the host's `progress` events, handing each to the call that asked for it. */
export class ProgressRouter {
  readonly #source: ProgressSource;
  readonly #calls = new Map<string, (data: JsonValue) => void>();
  readonly #listener = (event: ToolProgressEvent) => this.#calls.get(event.callId)?.(event.data);

  constructor(source: ProgressSource) {
    this.#source = source;
    source.on('progress', this.#listener);
  }

  /** Routes the progress of the call `callId` to `send` until the returned function is called. */
  route(callId: string, send: (params: ProgressParams) => void): () => void {
    const mapper = progressMapper();
    this.#calls.set(callId, (data) => send(mapper(data)));
    return () => this.#calls.delete(callId);
  }

  close(): void {
    this.#source.off('progress', this.#listener);
    this.#calls.clear();
  }
}

/**
 * A mapper for one call. The spec wants `progress` to increase with every notification: a tool that
 * emits `{ progress, total?, message? }` with increasing numbers (from 0) gets them passed through; anything
 * else counts its messages (1, 2, 3, …) and becomes the `message` (a string as it is, other data as
 * JSON).
 */
export function progressMapper(): (data: JsonValue) => ProgressParams {
  // None yet: a tool's first `progress` may be 0 (nothing done), and is passed on as it is.
  let last: number | undefined;
  let count = 0;
  return (data) => {
    count += 1;
    const shaped = shapedProgress(data);
    const progress =
      shaped !== undefined && (last === undefined || shaped.progress > last)
        ? shaped.progress
        : Math.max(count, (last ?? 0) + 1);
    last = progress;
    const params: ProgressParams = { progress };
    if (shaped?.total !== undefined && shaped.total >= progress) params.total = shaped.total;
    const message =
      shaped !== undefined ? shaped.message : typeof data === 'string' ? data : JSON.stringify(data);
    if (message !== undefined) params.message = message.slice(0, MAX_MESSAGE_CHARS);
    return params;
  };
}

function shapedProgress(data: JsonValue): ProgressParams | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const { progress, total, message } = data;
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return undefined;
  const params: ProgressParams = { progress };
  if (typeof total === 'number' && Number.isFinite(total)) params.total = total;
  if (typeof message === 'string') params.message = message;
  return params;
}
