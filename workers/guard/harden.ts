/**
 * Runs in every worker before any tool code loads: removes what a tool must not reach in-process.
 * In both tiers, because each of these reaches past the worker into the whole host process:
 *
 * - `process.kill(process.pid)` signals the host, and `process.binding` hands out internal bindings
 *   (process and signal wraps) that can do the same. `process.dlopen` goes when addons are off.
 * - `node:inspector`: a session can connect to the host's main thread and evaluate code there, and
 *   `inspector.open()` opens a debugger port for the whole process. (Strict's permission model
 *   refuses the inspector too.)
 * - `v8.setFlagsFromString` sets V8 flags for the whole process: `--allow-natives-syntax` then lets
 *   `%AbortJS()` abort the host. `v8.setHeapSnapshotNearHeapLimit` writes heap snapshots into the
 *   host's working directory, past strict's write limits.
 * - `process.report.getReport()` lists the whole process's environment (the host's secrets) even in
 *   a worker started with an empty `env`, and strict does not refuse it: reports are given without
 *   the environment, the command line and the libuv handles, and are never written to files.
 * - OpenSSL engines are shared libraries: `crypto.setEngine(path)` and the `privateKeyEngine` /
 *   `clientCertEngine` options of TLS contexts load native code into the host process even with
 *   `--no-addons`. With addons off, the three are refused.
 * - `os.setPriority(process.pid, 19)` renices the host's main thread (on Linux a pid names a thread):
 *   every package's calls then wait on a starved host, and without privileges it can't be undone.
 * - `process._getActiveHandles()` hands out every MessagePort the worker holds open, piscina's task
 *   port among them (whose listener on the host's main thread throws on a `null`, or on a reply it
 *   can't deserialize); `_getActiveRequests` goes with it.
 * - Node's fatal-exception handler (`process._fatalException`, what runs when no `uncaughtException`
 *   listener is left) prints straight to the process's stderr when it throws, or when it is replaced:
 *   a tool could make it do either (a throwing `process.exit` or `exit` listener, `Error.prepareStackTrace`
 *   for the text). It can't be replaced, and it never throws: a failure in it ends the worker.
 * - The process's file descriptors: a tool may use only those it opened itself (descriptor-table.ts,
 *   descriptor-handles.ts), so it can't close, read, write or take over the host's.
 *
 * This is defence in depth, not a boundary: see the table of isolation tiers in docs/isolation.md.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { builtinLoaded, nodeBinding } from './bindings.js';
import { guardDescriptorHandles } from './descriptor-handles.js';
import { guardFsDescriptors } from './descriptor-table.js';
import { lock } from './locks.js';

export interface HardenOptions {
  allowAddons: boolean;
}

const require = createRequire(import.meta.url);

/** What a tool reads when it loads a native addon where they are off: the flag and option that allow them. */
const ADDONS_OFF =
  "process.dlopen is not available: native addons are off for this package; allow them with --allow-addons PACKAGE (the allowAddons: ['PACKAGE'] option), or run it in the process tier in bubblewrap, where they are on";

function refuse(what: string) {
  return () => {
    throw new Error(`${what} is not available to tools in toolhost`);
  };
}

export function hardenWorker(options: HardenOptions): void {
  guardFsDescriptors();
  guardDescriptorHandles();
  const target = process as unknown as Record<string, unknown>;
  const removed = [
    'kill',
    '_kill',
    'binding',
    '_linkedBinding',
    '_debugProcess',
    '_getActiveHandles',
    '_getActiveRequests',
  ];
  for (const key of removed) {
    if (key in target) lock(target, key, refuse(`process.${key}`));
  }
  if (!options.allowAddons && 'dlopen' in target) {
    lock(target, 'dlopen', () => {
      throw new Error(ADDONS_OFF);
    });
  }

  hardenFatalException(target);
  hardenReport(target);
  hardenInspector();
  if (!options.allowAddons) hardenEngines();
  lock(require('node:os') as Record<string, unknown>, 'setPriority', refuse('os.setPriority'));
  const v8 = require('node:v8') as Record<string, unknown>;
  lock(v8, 'setFlagsFromString', refuse('v8.setFlagsFromString'));
  lock(v8, 'setHeapSnapshotNearHeapLimit', refuse('v8.setHeapSnapshotNearHeapLimit'));
  // `import { setFlagsFromString } from 'node:v8'` (or `setPriority` from 'node:os') in a tool sees
  // the replacements too.
  syncBuiltinESMExports();
}

function hardenFatalException(target: Record<string, unknown>): void {
  const apply = Reflect.apply;
  const fatalException = target['_fatalException'] as ((...args: unknown[]) => unknown) | undefined;
  // Native: it ends this worker's thread, whatever a tool did to process.exit or 'exit' listeners.
  const reallyExit = target['reallyExit'] as (code: number) => never;
  if (typeof fatalException !== 'function' || typeof reallyExit !== 'function') return;
  lock(target, '_fatalException', (error: unknown, fromPromise: unknown) => {
    try {
      if (apply(fatalException, target, [error, fromPromise]) === true) return true;
    } catch {
      // Printed to the process's stderr if it got out: the worker ends instead.
    }
    return apply(reallyExit, target, [1]);
  });
}

function hardenReport(target: Record<string, unknown>): void {
  const report = target['report'] as { getReport(error?: Error): object } | undefined;
  if (report === undefined) return;
  const getReport = report.getReport.bind(report);
  // The settings stay writable (detect-libc sets `excludeNetwork`) but no longer reach the process.
  const stand = {
    compact: false,
    directory: '',
    filename: '',
    excludeNetwork: false,
    signal: 'SIGUSR2',
    reportOnFatalError: false,
    reportOnSignal: false,
    reportOnUncaughtException: false,
    getReport(error?: Error): object {
      const full = getReport(error) as Record<string, unknown> & { header?: Record<string, unknown> };
      const { environmentVariables: _environment, libuv: _handles, ...rest } = full;
      return { ...rest, header: { ...full.header, commandLine: [] }, environmentVariables: {}, libuv: [] };
    },
    writeReport: refuse('process.report.writeReport'),
  };
  Object.defineProperty(target, 'report', {
    value: stand,
    writable: false,
    configurable: false,
    enumerable: true,
  });
}

function hardenInspector(): void {
  let inspector: { Session: { prototype: object } } & Record<string, unknown>;
  try {
    inspector = require('node:inspector');
  } catch {
    return; // A Node built without the inspector.
  }
  for (const method of ['connect', 'connectToMainThread']) {
    lock(inspector.Session.prototype, method, refuse(`inspector.Session#${method}`));
  }
  for (const key of ['open', 'waitForDebugger']) lock(inspector, key, refuse(`inspector.${key}`));
}

function hardenEngines(): void {
  // Node's crypto module takes `setEngine` from the binding when it first loads: replaced there
  // before that, `crypto.setEngine` refuses without node:crypto or node:tls loaded here.
  const binding = nodeBinding('crypto');
  const native = binding?.['SecureContext'] as { prototype?: unknown } | undefined;
  const secureContext = native?.prototype;
  if (
    binding !== undefined &&
    typeof secureContext === 'object' &&
    secureContext !== null &&
    !builtinLoaded('internal/crypto/util')
  ) {
    lock(binding, 'setEngine', refuse('crypto.setEngine'));
    refuseEngineOptions(secureContext);
    return;
  }
  const crypto = require('node:crypto') as Record<string, unknown>;
  lock(crypto, 'setEngine', refuse('crypto.setEngine'));
  const tls = require('node:tls') as { createSecureContext(): { context: object } };
  refuseEngineOptions(Object.getPrototypeOf(tls.createSecureContext().context) as object);
}

/**
 * The TLS options reach OpenSSL through methods of the native SecureContext, whatever path the
 * options took (tls.connect, https.Agent, createSecureContext).
 */
function refuseEngineOptions(secureContext: object): void {
  lock(secureContext, 'setEngineKey', refuse('the privateKeyEngine TLS option'));
  lock(secureContext, 'setClientCertEngine', refuse('the clientCertEngine TLS option'));
}
