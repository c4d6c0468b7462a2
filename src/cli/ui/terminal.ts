/**
 * The streams a command writes to, and what they can show: colour only on a terminal (and never
 * with NO_COLOR), a live display only on a terminal outside CI.
 */
import { stripVTControlCharacters } from 'node:util';

/** The slice of a process stream the commands use, so a test can hand in its own. */
export interface OutputStream {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: NodeJS.ReadableStream;
  env: Readonly<Record<string, string | undefined>>;
}

export interface Style {
  readonly enabled: boolean;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

/** Colour when `stream` is a terminal, unless NO_COLOR is set or TERM is dumb; FORCE_COLOR forces it. */
export function styleFor(stream: OutputStream, env: CliIo['env']): Style {
  const forced = env['FORCE_COLOR'] !== undefined && env['FORCE_COLOR'] !== '0';
  const enabled =
    forced || (stream.isTTY === true && env['NO_COLOR'] === undefined && env['TERM'] !== 'dumb');
  const wrap = (open: number, close: number) => (text: string) =>
    enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    green: wrap(32, 39),
    red: wrap(31, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
    dim: wrap(2, 22),
    bold: wrap(1, 22),
  };
}

/** The terminal's width, or `fallback` when it is unknown (a pipe, or a terminal reporting 0). */
export function screenWidth(stream: OutputStream, fallback = 80): number {
  return stream.columns !== undefined && stream.columns > 0 ? stream.columns : fallback;
}

/** A live display (spinner, redrawn lines) only on a terminal and outside CI. */
export function isInteractive(stream: OutputStream, env: CliIo['env']): boolean {
  return stream.isTTY === true && (env['CI'] === undefined || env['CI'] === '' || env['CI'] === 'false');
}

/** The width a string takes on screen, ignoring colour codes. */
export function visibleLength(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}

/** Cuts `text` (no colour codes) to `width` characters, marking the cut with an ellipsis. */
export function truncate(text: string, width: number): string {
  const characters = [...text];
  if (characters.length <= width) return text;
  return `${characters.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** One line for a multi-line message: line breaks become " / ", runs of spaces one space. */
export function oneLine(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' / ');
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
