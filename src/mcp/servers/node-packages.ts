/**
 * Node packages as Node finds them: by name, from a folder up through every `node_modules` above
 * it. Cheap to import (no sandbox or network modules): a config's entries are read with it.
 */
import { realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The package `name` as Node finds it from `from`: as met in a `node_modules` above, and by its real path. */
export async function findPackage(
  from: string,
  name: string,
): Promise<{ path: string; real: string } | undefined> {
  let folder = from;
  for (;;) {
    const candidate = join(folder, 'node_modules', name);
    const real = await realpath(candidate).catch(() => undefined);
    if (real !== undefined) return { path: candidate, real };
    const parent = dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
}

/** An npm package name: `name` or `@scope/name`, nothing that climbs out of `node_modules`. */
export function isPackageName(name: string): boolean {
  return /^(?:@[^./\\\0][^/\\\0]*\/)?[^./\\\0_][^/\\\0]*$/.test(name);
}
