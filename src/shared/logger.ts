/** The host's logger: what it is, the default one, and the wrapper that keeps worker text as data. */
import { escapeControl } from '../boundary/sanitize.js';

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const stderrLogger: Logger = {
  info: () => {},
  warn: (message) => process.stderr.write(`toolhost: ${message}\n`),
  error: (message) => process.stderr.write(`toolhost: ${message}\n`),
};

/** A logger whose every line is one line of plain text, whatever a worker put into it. */
export function sanitizingLogger(logger: Logger): Logger {
  const clean = (message: string) => escapeControl(String(message));
  return {
    info: (message) => logger.info(clean(message)),
    warn: (message) => logger.warn(clean(message)),
    error: (message) => logger.error(clean(message)),
  };
}
