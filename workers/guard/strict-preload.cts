/**
 * Preloaded (`--require`) into every strict worker, before piscina's worker code and before any tool:
 * gives back the read access Node's permission model grants a worker to the host's working directory.
 *
 * Node 22 and later (seen on 22.23.5, 24.22.3 and 26.12.1; not on 20.20) let a worker started with
 * `--permission` read everything under the process's working directory as it was when the worker
 * started, beside its `--allow-fs-read` grants; the main thread under the same flags gets no such
 * grant. The working directory of an agent is typically its project folder: its sources and its
 * `.env`. `process.permission.drop` (Node 24.20 and 26.3 and later) takes the folder back; explicit
 * grants inside it (the temp folder, toolhost's own `dist/`) stay. Where the working directory lies
 * inside a grant, it is granted anyway and left alone (the package folder is none: a host run there
 * gives its tools no read of it). Node 22 has no `drop`: there a strict tool can read the working directory, and the host says
 * so once (docs/isolation.md: what each tier contains).
 *
 * CommonJS, because `--require` is what every supported Node preloads into a worker before its main
 * script; it must not depend on anything outside toolhost's `dist/workers`, which strict grants.
 */
import path = require('node:path');

interface DroppablePermission {
  drop?(scope: string, reference?: string): void;
}

const permission = (process as { permission?: DroppablePermission }).permission;

if (typeof permission?.drop === 'function') {
  let workingDirectory: string | undefined;
  try {
    workingDirectory = process.cwd();
  } catch {
    // A working directory that was removed can't be read either.
  }
  const grants = process.execArgv
    .filter((flag) => flag.startsWith('--allow-fs-read='))
    .map((flag) => path.resolve(flag.slice('--allow-fs-read='.length).replace(/[\\/]\*$/, '')));
  const within = (folder: string, file: string) =>
    file === folder || file.startsWith(folder.endsWith(path.sep) ? folder : folder + path.sep);
  if (workingDirectory !== undefined && !grants.some((grant) => within(grant, workingDirectory))) {
    permission.drop('fs.read', workingDirectory);
  }
}

// `fs.realpathSync` within the grants too: see strict-realpath.cts.
require('./strict-realpath.cjs');
// No `fs.cpSync` and no `node:sqlite`, which reach files past the permission model: see
// strict-unchecked.cts.
require('./strict-unchecked.cjs');
