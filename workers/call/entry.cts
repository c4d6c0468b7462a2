/**
 * piscina's task file for call workers. piscina `require()`s its task file before anything else; where
 * require(esm) is on (Node 20.19, 22.12 and later), an ES module task file is loaded through it, and
 * a worker terminated while Node builds the `__esModule` facade of such a module (one with a default
 * export, as the call worker has) fails a native assertion that aborts the whole process: the host.
 * This entry is CommonJS, so that `require()` loads no ES module, and it hands piscina a Promise for
 * the call worker's handler, loaded with `import()`; piscina awaits it before it marks the worker
 * ready, so the call worker is loaded (locked down, hardened) before a call reaches it, as before.
 */
import path = require('node:path');
import url = require('node:url');

type Handler = (task: unknown) => unknown;

const callWorker = url.pathToFileURL(path.join(__dirname, 'call-worker.js')).href;

export = import(callWorker).then((loaded: { default: Handler }) => loaded.default);
