/**
 * What strict's own refusals (strict-realpath.cts, strict-unchecked.cts) share: the path a call
 * names, as the permission model would resolve it, and a refusal in the permission model's own
 * shape, which the host reports as `TOOL_ACCESS_DENIED`. Everything used here is taken when the
 * preload requires it, before any tool code can replace it.
 */
import path = require('node:path');
import url = require('node:url');

const defineProperty = Object.defineProperty;
const resolve = path.resolve;
const fileURLToPath = url.fileURLToPath;
const isBuffer = Buffer.isBuffer;
const bufferToString = Buffer.prototype.toString;
const apply = Reflect.apply;
const SafeURL = URL;
const SafeError = Error;

/** The path a call names (a string, a Buffer or a file URL), resolved; undefined when it names none. */
function pathOf(given: unknown): string | undefined {
  try {
    if (typeof given === 'string') return resolve(given);
    if (isBuffer(given)) return resolve(apply(bufferToString, given, ['utf8']) as string);
    if (given instanceof SafeURL) return resolve(fileURLToPath(given));
  } catch {
    // Not a file URL, a NUL byte: Node's own validation answers, or the refusal names no path.
  }
  return undefined;
}

/** An `ERR_ACCESS_DENIED` error naming what was refused (`permission`) and where (`resource`). */
function refusal(permission: string, resource: string): Error {
  const error = new SafeError('Access to this API has been restricted');
  const fields: Record<string, string> = { code: 'ERR_ACCESS_DENIED', permission, resource };
  for (const key of ['code', 'permission', 'resource']) {
    defineProperty(error, key, { value: fields[key], enumerable: true, writable: true, configurable: true });
  }
  return error;
}

export = { pathOf, refusal };
