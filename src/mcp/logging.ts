/**
 * What a tool printed → `notifications/message`, only for a client that asked for log messages:
 * a 2026-07-28 request names its level in `_meta`, a 2025-era client sends `logging/setLevel`.
 * The host emits one `output` event per call with the lines it kept (bounded, as for every
 * screen); a {@link LogRouter} holds one listener and hands each to the call that wants it.
 */
import type { LoggingLevel } from '@modelcontextprotocol/server';
import { escapeControl, truncate } from '../boundary/sanitize.js';
import type { ToolOutputEvent } from '../host/events.js';
import type { ToolHost } from '../host/tool-host.js';

/** The levels in the spec's order, least severe first. */
const LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** Most messages one call sends: a tool printing a million empty-ish lines costs the client one line. */
const MAX_MESSAGES = 1000;

/** What a call's client asked for: the least severe level it wants, and how to send one message. */
export interface LogWish {
  level: LoggingLevel;
  send(notification: { method: 'notifications/message'; params: Record<string, unknown> }): Promise<unknown>;
}

/** The part of a ToolHost the router listens to. */
export type OutputSource = Pick<ToolHost, 'on' | 'off'>;

/** Whether a value from the client names a log level. */
export function isLoggingLevel(value: unknown): value is LoggingLevel {
  return typeof value === 'string' && (LEVELS as readonly string[]).includes(value);
}

/** One listener on the host's `output` events, handing each to the call that asked for it. */
export class LogRouter {
  readonly #source: OutputSource;
  readonly #calls = new Map<string, (event: ToolOutputEvent) => void>();
  readonly #listener = (event: ToolOutputEvent) => this.#calls.get(event.callId)?.(event);

  constructor(source: OutputSource) {
    this.#source = source;
    source.on('output', this.#listener);
  }

  /** Routes the output of the call `callId` to `send` until the returned function is called. */
  route(callId: string, send: (event: ToolOutputEvent) => void): () => void {
    this.#calls.set(callId, send);
    return () => this.#calls.delete(callId);
  }

  close(): void {
    this.#source.off('output', this.#listener);
    this.#calls.clear();
  }
}

/**
 * The `notifications/message` params for a call's output at or above `wanted`: a line on stdout is
 * `info`, one on stderr `warning`, and output the host dropped past its bound is said in one
 * `warning`. Each line is cut and its control characters escaped as on the server's own stderr.
 */
export function logMessages(event: ToolOutputEvent, wanted: LoggingLevel): Array<Record<string, unknown>> {
  const floor = LEVELS.indexOf(wanted);
  const messages: Array<Record<string, unknown>> = [];
  let left = 0;
  for (const log of event.logs) {
    const level: LoggingLevel = log.stream === 'stderr' ? 'warning' : 'info';
    if (LEVELS.indexOf(level) < floor) continue;
    // The host keeps a stream's consecutive writes as one text; a client shows a message per line.
    for (const line of log.text.split('\n')) {
      if (line.trim() === '') continue;
      if (messages.length === MAX_MESSAGES) {
        left += 1;
        continue;
      }
      messages.push({ level, logger: event.name, data: escapeControl(truncate(line.trimEnd())) });
    }
  }
  if ((event.droppedChars > 0 || left > 0) && LEVELS.indexOf('warning') >= floor) {
    const lost = [
      ...(left > 0 ? [`${left} more lines`] : []),
      ...(event.droppedChars > 0 ? [`${event.droppedChars} bytes the host dropped`] : []),
    ];
    messages.push({
      level: 'warning',
      logger: event.name,
      data: `output not sent: ${lost.join(' and ')}`,
    });
  }
  return messages;
}
