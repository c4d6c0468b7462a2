/**
 * Text that came out of a worker is data, not formatting: before it reaches a logger, an event or a
 * terminal, control characters (ANSI escapes, carriage returns, bells, NULs) are shown as escapes, so
 * a tool can't forge log lines or repaint the host's screen, and the text is cut to a bounded length.
 */

/** The longest worker-provided message the host keeps (fault texts, error messages, reasons). */
export const MAX_MESSAGE_LENGTH = 2000;

// C0 controls, DEL and C1 controls (U+0080..U+009F, which terminals also read as escapes), plus the
// line and paragraph separators that some viewers break lines at.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above, newline and tab kept
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

function escapeOne(character: string): string {
  if (character === '\n') return '\\n';
  if (character === '\r') return '\\r';
  if (character === '\t') return '\\t';
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Escapes control characters. With `keepLines`, newlines and tabs stay (a multi-line error message
 * for the model); without, the text is one line (a log line).
 */
export function escapeControl(text: string, options: { keepLines?: boolean } = {}): string {
  return text.replace(options.keepLines === true ? CONTROL_BUT_LINES : CONTROL, escapeOne);
}

/** What {@link truncate} puts after the text it kept. */
const CUT_MARKER = /… \((\d{1,15}) more characters\)$/;

/**
 * Cuts text to `max` characters (never inside a surrogate pair), saying how much was cut. Text it
 * already cut to `max` (a worker cuts its messages as the host does) is left as it is.
 */
export function truncate(text: string, max = MAX_MESSAGE_LENGTH): string {
  if (text.length <= max) return text;
  const cut = CUT_MARKER.exec(text);
  if (cut !== null && cut.index <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/** A worker-provided message made safe for the model and a terminal: bounded, lines kept. */
export function safeMessage(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || value === '') return fallback;
  return escapeControl(truncate(value), { keepLines: true });
}
