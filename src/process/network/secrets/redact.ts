/**
 * Redaction: every granted secret value, wherever it turns up in what leaves the host (a call's
 * result, `details`, logs, progress, the files written under `dataDir`, events, the host's log), is
 * replaced by `[secret NAME]`. In the process tier a tool never holds a value, so this is the last
 * line, not the first: it catches a value an upstream sent where the proxy's swap could not see it
 * (a compressed answer), and the values a thread tier was handed on purpose.
 */
import type { Logger } from '../../../shared/logger.js';
import { type Needle, replaceInText } from './replace.js';

/** The most nested levels walked; deeper data is cut by the reply checks long before this. */
const MAX_DEPTH = 10_000;

export class SecretRedactor {
  readonly #needles: Needle[];

  constructor(values: Readonly<Record<string, string>>) {
    this.#needles = Object.entries(values).map(([name, value]) => ({
      find: value,
      replace: `[secret ${name}]`,
      name,
    }));
  }

  /** Whether there is anything to redact. */
  get active(): boolean {
    return this.#needles.length > 0;
  }

  text(text: string): string {
    return this.#needles.length === 0 ? text : replaceInText(text, this.#needles);
  }

  /**
   * A copy of plain data (objects, arrays, strings, numbers, bytes) with every string redacted;
   * the same value when nothing in it holds a secret. Byte arrays are searched too.
   */
  data<T>(value: T): T {
    if (this.#needles.length === 0) return value;
    return this.#walk(value, 0) as T;
  }

  /** The logger, its messages redacted. */
  logger(logger: Logger): Logger {
    if (this.#needles.length === 0) return logger;
    return {
      info: (message) => logger.info(this.text(String(message))),
      warn: (message) => logger.warn(this.text(String(message))),
      error: (message) => logger.error(this.text(String(message))),
    };
  }

  #walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
    if (ArrayBuffer.isView(value)) return this.#bytes(value);
    if (Array.isArray(value)) {
      let changed = false;
      const copy = value.map((item) => {
        const next = this.#walk(item, depth + 1);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? copy : value;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return value;
    let changed = false;
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const next = this.#walk(item, depth + 1);
      if (next !== item) changed = true;
      copy[this.text(key)] = next;
      if (this.text(key) !== key) changed = true;
    }
    return changed ? copy : value;
  }

  #bytes(view: ArrayBufferView): ArrayBufferView {
    const bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    if (!this.#needles.some((needle) => bytes.includes(needle.find))) return view;
    // Redacted as text: a secret in bytes is text around it, or the bytes are not worth keeping whole.
    const redacted = Buffer.from(this.text(bytes.toString('latin1')), 'latin1');
    return view instanceof Buffer ? redacted : new Uint8Array(redacted);
  }
}
