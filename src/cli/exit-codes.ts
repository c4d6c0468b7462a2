/**
 * Exit codes, and the one kind of error that means "the user asked for something that can't be
 * done": it becomes one clear line on stderr and exit code 2, never a stack trace.
 */
import { ToolHostError } from '../boundary/errors.js';
import { messages } from './ui/messages.js';

export const ExitCode = {
  /** Everything asked for ran and passed. */
  ok: 0,
  /** A tool or a selftest failed, or a module was left out. */
  failed: 1,
  /** A usage error: bad arguments, a missing path, a folder that is not a tool package, … */
  usage: 2,
  /** Interrupted (SIGINT), as shells report it. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A user's mistake, reported as one line on stderr with exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The exit code and the one line for an error thrown while a command ran, or `undefined` for an
 * error that is toolhost's own fault (a bug), which keeps its stack.
 */
export function describeCliError(error: unknown): { exitCode: ExitCode; line: string } | undefined {
  if (error instanceof UsageError) return { exitCode: ExitCode.usage, line: error.message };
  if (error instanceof ToolHostError && error.code !== 'HOST_CLOSED') {
    // The host throws these only for a caller's mistake (a missing path, not a package; options are
    // checked by the command line first): here, what the user typed.
    return { exitCode: ExitCode.usage, line: messages.fromLibrary(firstLine(error.message)) };
  }
  return undefined;
}

function firstLine(message: string): string {
  const newline = message.indexOf('\n');
  return newline === -1 ? message : message.slice(0, newline);
}
