/**
 * A running host hears its lock file change (a `toolhost pin` in another shell), so what was just
 * pinned is offered without waiting for the package to change again. The folder is watched, not
 * the file: pinning replaces the file by a rename, which ends a watch on the file itself.
 */
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Calls `onChange` when something happens to `file`; returns the function that stops watching. */
export function watchLockFile(file: string, onChange: () => void): () => void {
  let watcher: FSWatcher;
  try {
    watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
      // Some platforms don't name the file: then any change in the folder is checked (cheaply,
      // by the file's identity).
      if (name === null || name === basename(file)) onChange();
    });
  } catch {
    // No watch to be had (the system's limit of watches, say): the lock is still read again as
    // each load starts.
    return () => {};
  }
  watcher.on('error', () => watcher.close());
  return () => watcher.close();
}
