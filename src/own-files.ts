/**
 * Where toolhost's own files are, for the code that starts workers and processes from them or hands
 * their paths to a sandbox. Every such path is taken from here, from this file's own folder
 * (`dist/src/`), and this file stays at the top of `src/` for that: the build bundles the root entry
 * into `dist/src/index.js` and its lazily loaded parts into files beside it (see
 * scripts/bundle.mjs), so the same paths come out of the bundle and out of the modules `tsc` wrote.
 */
const SRC = new URL('./', import.meta.url);

/** A file of `dist/src/` (`path` relative to it). */
export function srcFile(path: string): URL {
  return new URL(path, SRC);
}

/** A file of `dist/workers/`, the code that runs inside worker threads only. */
export function workersFile(path: string): URL {
  return new URL(`../workers/${path}`, SRC);
}

/** toolhost's own `package.json`. */
export const PACKAGE_JSON = new URL('../../package.json', SRC);
