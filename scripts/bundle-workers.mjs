/**
 * Bundles each worker entry in `dist/` into one file, in place, after `tsc` (`npm run build`).
 * Every declaration read and every call worker starts a fresh thread, and Node's ES module loader
 * costs about a millisecond per file it resolves, reads and links there: the reader's 11 files took
 * 17 ms of its start (the loader's own first use included), the call worker has 28. One file does
 * the same work in a few.
 *
 * - Each bundle stays where `tsc` put its entry, so `import.meta.url` still names the same folder
 *   (the reader and the call worker find their own code by it, to leave its frames out of a tool's
 *   stack). The modules they take in use `import.meta.url` only for `createRequire` of Node's
 *   built-ins, which doesn't depend on where the file is.
 * - Node's built-ins stay imports, and so does `workers/call/active-call.js`, the call running in
 *   the worker: the boundary tests' hostile tools take it from there, to change a reply after the
 *   worker checked it (the worst case: a tool that reached the worker's own state), and the host
 *   must still refuse what they send.
 * - The modules stay in `dist/` as `tsc` wrote them, for whoever imports them directly.
 */
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const ENTRIES = ['workers/read-declaration.js', 'workers/call/call-worker.js'];
/** Imported by path, never copied into a bundle (every importer is in the entry's folder). */
const SHARED = new Set(['./active-call.js']);
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

for (const entry of ENTRIES) {
  const file = `${dist}${entry}`;
  const bundle = await rolldown({
    input: file,
    platform: 'node',
    external: (id) => SHARED.has(id) || (!id.startsWith('.') && !id.startsWith('/')),
    logLevel: 'warn',
  });
  await bundle.write({ file, format: 'esm', sourcemap: false });
  await bundle.close();
}
