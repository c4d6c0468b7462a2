/**
 * What a tool printed → `notifications/message`, only for a client that asked for log messages:
 * a 2026-07-28 request names its level in `_meta`, a 2025-era client sends `logging/setLevel`.
 * Such a call is made with an `onOutput` listener, so its worker forwards the lines as they are
 * printed (bounded, as for every screen); a {@link CallLog} turns each piece into messages while
 * the call runs, and what is left with the answer, each line once.
 */
import { LOG_LEVEL_META_KEY, type LoggingLevel } from '@modelcontextprotocol/server';
import { escapeControl, MAX_MESSAGE_LENGTH, truncate } from '../boundary/sanitize.js';
import type { ToolOutputEvent } from '../host/events.js';

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

/**
 * The most of an unfinished line held for the rest of it: a tool writing one endless line without
 * a newline gets it sent in cut pieces, not held in memory.
 */
const MAX_HELD_CHARACTERS = 4 * MAX_MESSAGE_LENGTH;

/** What a call's client asked for: the least severe level it wants, and how to send one message. */
export interface LogWish {
  level: LoggingLevel;
  send(notification: { method: 'notifications/message'; params: Record<string, unknown> }): Promise<unknown>;
}

/** The level a 2026-07-28 request's envelope asks for; none (no log messages) when absent or not a level. */
export function levelOf(envelope: Record<string, unknown> | undefined): LoggingLevel | undefined {
  const level = envelope?.[LOG_LEVEL_META_KEY];
  return isLoggingLevel(level) ? level : undefined;
}

/** Whether a value from the client names a log level. */
export function isLoggingLevel(value: unknown): value is LoggingLevel {
  return typeof value === 'string' && (LEVELS as readonly string[]).includes(value);
}

type Stream = 'stdout' | 'stderr';

/**
 * One call's log messages: a line on stdout is `info`, one on stderr `warning`, each cut and its
 * control characters escaped as on the server's own stderr. A line that arrives in pieces (a tool
 * writing without a newline) is sent once it is whole, or when the call answers. Past
 * {@link MAX_MESSAGES}, and for output the host dropped past its bound, one `warning` at the end
 * says what was not sent.
 */
export class CallLog {
  readonly #wish: LogWish;
  readonly #logger: string;
  readonly #floor: number;
  readonly #held: Record<Stream, string> = { stdout: '', stderr: '' };
  #sent = 0;
  #left = 0;
  #droppedChars = 0;
  #ended = false;

  constructor(wish: LogWish, toolName: string) {
    this.#wish = wish;
    this.#logger = toolName;
    this.#floor = LEVELS.indexOf(wish.level);
  }

  /** A piece of the call's output: its whole lines are sent now. */
  take(event: ToolOutputEvent): void {
    if (this.#ended) return;
    this.#droppedChars += event.droppedChars;
    for (const log of event.logs) {
      const text = this.#held[log.stream] + log.text;
      const end = text.lastIndexOf('\n');
      let rest = end === -1 ? text : text.slice(end + 1);
      if (end !== -1) this.#lines(log.stream, text.slice(0, end));
      if (rest.length > MAX_HELD_CHARACTERS) {
        this.#lines(log.stream, rest);
        rest = '';
      }
      this.#held[log.stream] = rest;
    }
  }

  /** The call answered: what is held is sent, then what was not; later output is dropped. */
  end(): void {
    if (this.#ended) return;
    for (const stream of ['stdout', 'stderr'] as const) this.#lines(stream, this.#held[stream]);
    this.#ended = true;
    if ((this.#droppedChars === 0 && this.#left === 0) || LEVELS.indexOf('warning') < this.#floor) return;
    const lost = [
      ...(this.#left > 0 ? [`${this.#left} more lines`] : []),
      ...(this.#droppedChars > 0 ? [`${this.#droppedChars} bytes the host dropped`] : []),
    ];
    this.#send('warning', `output not sent: ${lost.join(' and ')}`);
  }

  #lines(stream: Stream, text: string): void {
    const level: LoggingLevel = stream === 'stderr' ? 'warning' : 'info';
    if (LEVELS.indexOf(level) < this.#floor) return;
    // A client shows a message per line.
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      if (this.#sent === MAX_MESSAGES) {
        this.#left += 1;
        continue;
      }
      this.#sent += 1;
      this.#send(level, escapeControl(truncate(line.trimEnd())));
    }
  }

  #send(level: LoggingLevel, data: string): void {
    void this.#wish.send({ method: 'notifications/message', params: { level, logger: this.#logger, data } });
  }
}
