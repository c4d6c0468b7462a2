/**
 * Required by strict-preload.cts, so in strict workers only: `fs.realpathSync` of a path outside the
 * worker's read grants is refused, as Node refuses every other way of asking about such a path
 * (`stat`, `exists`, `access`, `realpath`, `realpathSync.native`). Node's own `fs.realpathSync`
 * (written in JavaScript over its internal `lstat`) answers such a path on Node 20 and on 26.0 to
 * 26.10 (26.12.1 refuses it, as 22.23.5 and 24.22.3 do): whether a file exists, and where its links
 * lead, leaked past the permission model. The check asks the permission model itself, for the path
 * as given (resolved against the working directory), before Node's function runs. Everything it uses
 * is taken now, before any tool code can replace it.
 */
import fs = require('node:fs');
import path = require('node:path');
import url = require('node:url');

interface Permission {
  has(scope: string, reference?: string): boolean;
}

const permission = (process as { permission?: Permission }).permission;
const realpathSync = fs.realpathSync;
const apply = Reflect.apply;
const defineProperty = Object.defineProperty;
const resolve = path.resolve;
const fileURLToPath = url.fileURLToPath;
const isBuffer = Buffer.isBuffer;
const bufferToString = Buffer.prototype.toString;
const SafeURL = URL;
const SafeError = Error;

/** The path `realpathSync` will look at, or undefined when Node itself will refuse the argument. */
function pathOf(given: unknown): string | undefined {
  try {
    if (typeof given === 'string') return resolve(given);
    if (isBuffer(given)) return resolve(apply(bufferToString, given, ['utf8']) as string);
    if (given instanceof SafeURL) return resolve(fileURLToPath(given));
  } catch {
    // Not a file URL, a NUL byte: Node's own validation answers.
  }
  return undefined;
}

function refusal(resource: string): Error {
  const error = new SafeError('Access to this API has been restricted');
  const fields = { code: 'ERR_ACCESS_DENIED', permission: 'FileSystemRead', resource };
  defineProperty(error, 'code', { value: fields.code, enumerable: true, writable: true, configurable: true });
  defineProperty(error, 'permission', {
    value: fields.permission,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  defineProperty(error, 'resource', {
    value: fields.resource,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return error;
}

if (permission !== undefined && typeof permission.has === 'function') {
  const has = permission.has;
  const guarded = function realpathSyncWithinGrants(this: unknown) {
    // biome-ignore lint/complexity/noArguments: a rest array would read holes through Array.prototype.
    const given: unknown = arguments.length > 0 ? arguments[0] : undefined;
    const resolved = pathOf(given);
    if (resolved !== undefined && apply(has, permission, ['fs.read', resolved]) !== true)
      throw refusal(resolved);
    // biome-ignore lint/complexity/noArguments: see above.
    return apply(realpathSync, this, arguments);
  } as unknown as typeof fs.realpathSync;
  guarded.native = realpathSync.native;
  fs.realpathSync = guarded;
}
