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
import refusals = require('./strict-refusals.cjs');

interface Permission {
  has(scope: string, reference?: string): boolean;
}

const permission = (process as { permission?: Permission }).permission;
const realpathSync = fs.realpathSync;
const apply = Reflect.apply;
const { pathOf, refusal } = refusals;

if (permission !== undefined && typeof permission.has === 'function') {
  const has = permission.has;
  const guarded = function realpathSyncWithinGrants(this: unknown) {
    // biome-ignore lint/complexity/noArguments: a rest array would read holes through Array.prototype.
    const given: unknown = arguments.length > 0 ? arguments[0] : undefined;
    const resolved = pathOf(given);
    if (resolved !== undefined && apply(has, permission, ['fs.read', resolved]) !== true)
      throw refusal('FileSystemRead', resolved);
    // biome-ignore lint/complexity/noArguments: see above.
    return apply(realpathSync, this, arguments);
  } as unknown as typeof fs.realpathSync;
  guarded.native = realpathSync.native;
  fs.realpathSync = guarded;
}
