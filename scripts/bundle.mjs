/**
 * Bundles, in place, after `tsc` (`npm run build`): each worker entry in `dist/workers/` into one
 * file (the code that runs a package process's calls among them), and the root entry
 * `dist/src/index.js` into one file with its lazily loaded parts beside it. Node's ES module loader
 * costs about a millisecond per file it resolves, reads and links: a declaration reader's 11 files
 * took 17 ms of its start (the loader's own first use included), the call worker has 28, and
 * `import('toolhost')` loaded 90. One file does the same work in a few, and holds less: an idle
 * package process held about 2 MB less (PSS, Node 20) with its call code in one file than in 35.
 *
 * Workers:
 * - Each bundle stays where `tsc` put its entry, so `import.meta.url` still names the same folder
 *   (the reader and the call worker find their own code by it, to leave its frames out of a tool's
 *   stack). The modules they take in use `import.meta.url` only for `createRequire` of Node's
 *   built-ins, which doesn't depend on where the file is.
 * - Node's built-ins stay imports, and so does `workers/call/active-call.js`, the call running in
 *   the worker: the boundary tests' hostile tools take it from there, to change a reply after the
 *   worker checked it (the worst case: a tool that reached the worker's own state), and the host
 *   must still refuse what they send.
 *
 * The root entry:
 * - Its dynamic imports (the tool-use loop, the process tier) become chunks in `dist/src/`, loaded
 *   on first use as before. Every path to toolhost's own files comes from `src/own-files.ts`,
 *   relative to `dist/src/`, so the bundle and its chunks, all in that folder, find the same files.
 * - Packages and Node's built-ins stay imports. What the host starts from a file (the call worker,
 *   a reader, a package's process, the egress proxy's thread, the schema probe) runs the modules
 *   `tsc` wrote, in its own thread or process.
 *
 * The modules stay in `dist/` as `tsc` wrote them, for whoever imports them directly (the CLI does;
 * its own start is in-process and small).
 */
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const WORKER_ENTRIES = [
  'workers/read-declaration.js',
  'workers/call/call-worker.js',
  'workers/call/process-calls.js',
];
/** Imported by path, never copied into a bundle (every importer is in the entry's folder). */
const SHARED = new Set(['./active-call.js']);
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const isPackage = (id) => !id.startsWith('.') && !id.startsWith('/');

for (const entry of WORKER_ENTRIES) {
  const file = `${dist}${entry}`;
  const bundle = await rolldown({
    input: file,
    platform: 'node',
    external: (id) => SHARED.has(id) || isPackage(id),
    logLevel: 'warn',
  });
  await bundle.write({ file, format: 'esm', sourcemap: false });
  await bundle.close();
}

const root = await rolldown({
  input: { index: `${dist}src/index.js` },
  platform: 'node',
  external: isPackage,
  logLevel: 'warn',
});
await root.write({
  dir: `${dist}src`,
  format: 'esm',
  sourcemap: false,
  entryFileNames: '[name].js',
  chunkFileNames: 'bundle-[name]-[hash].js',
});
await root.close();
