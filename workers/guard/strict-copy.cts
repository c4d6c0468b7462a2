/**
 * Required by strict-preload.cts, so in strict workers only: `fs.cpSync` is refused. On Node 22 and
 * later it copies in native code, which makes the symbolic links it copies without the permission
 * model's check (`fs.symlink` itself is refused under it). A tool could copy a link of its own
 * snapshot into its tmp folder, somewhere deeper, and climb out through it with `..`, which the
 * permission model reads as text (tried on 22.23.5, 24.22.3 and 26.12.1). `fs.cp` and
 * `fs.promises.cp` go through the checked calls, and stay (under strict's grants they are refused
 * anyway, reading the folders above the destination). Node 20's `cpSync` is JavaScript over the
 * checked calls; it is refused all the same, so strict behaves alike on every line. Everything it
 * uses is taken now, before any tool code can replace it.
 */
import fs = require('node:fs');
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

/** Where the copy would go, as the refusal names it. */
function destinationOf(given: unknown): string {
  try {
    if (typeof given === 'string') return resolve(given);
    if (isBuffer(given)) return resolve(apply(bufferToString, given, ['utf8']) as string);
    if (given instanceof SafeURL) return resolve(fileURLToPath(given));
  } catch {
    // Not a file URL, a NUL byte: the refusal names no path.
  }
  return '';
}

function refusal(resource: string): Error {
  const error = new SafeError('Access to this API has been restricted');
  const fields: Record<string, string> = { code: 'ERR_ACCESS_DENIED', permission: 'fs.cpSync', resource };
  for (const key of ['code', 'permission', 'resource']) {
    defineProperty(error, key, { value: fields[key], enumerable: true, writable: true, configurable: true });
  }
  return error;
}

fs.cpSync = function cpSyncRefused(_source: unknown, destination: unknown): void {
  throw refusal(destinationOf(destination));
} as typeof fs.cpSync;
