/**
 * The host's options as callers write them: their types, with each default in its TSDoc. They are
 * checked, and the defaults filled in, by `resolveSettings` (settings.ts) when the host is built.
 */
import type { IsolationTier } from '../calls/isolation.js';
import type { NetworkAllowance } from '../process/network/grant.js';
import type { Clock } from '../registry/reread-schedule.js';
import type { Logger } from '../shared/logger.js';
import type { NetworkTestingOptions } from './network-options.js';

export interface ToolHostOptions {
  /**
   * Where the host makes its own temp folder (`toolhost-<pid>-<hex>`: calls' `ctx.tmpDir`s and the
   * package snapshots; removed on close). @default os.tmpdir()
   */
  tempRoot?: string;
  /** Where full outputs of cut results are written. @default join(os.tmpdir(), 'toolhost-data') */
  dataDir?: string;
  /** Receives left-out modules (once each), worker faults and, without an `output` listener, tool printing. @default warnings and errors to stderr */
  logger?: Logger;
  /** Environment variables passed to tool workers; everything else is withheld. @default [] */
  envAllowList?: readonly string[];
  /** Heap limit of a call worker (in the process tier, of a package process), in MB. @default 128 */
  callHeapMb?: number;
  /** Stack size of a call worker (in the process tier, V8's stack limit in a package process), in MB. @default 4 */
  callStackMb?: number;
  /** Heap limit of a declaration reader, in MB. @default 64 */
  readHeapMb?: number;
  /** Time bound of a declaration read, in ms. @default 5000 */
  readTimeoutMs?: number;
  /** Waits between re-reads of a declaration that ran over its time bound. @default [60000, 300000, 1800000] */
  rereadDelaysMs?: readonly number[];
  /** The clock the re-read schedule uses. @default the system clock, with unref'd timers */
  clock?: Clock;
  /** After a call times out, how long the tool may still finish before its worker (or process) is ended. @default 100 */
  timeoutGraceMs?: number;
  /** Worker threads per trust domain (package); in the process tier, processes per package. @default os.availableParallelism() */
  maxThreadsPerPool?: number;
  /**
   * Workers the whole host runs at once: worker threads (worker and strict tiers) and package
   * processes (the process tier; each counts one, and runs one call at a time). A call beyond it
   * waits its turn, round-robin across packages, and its timeout counts from when it starts; idle
   * packages' workers are ended first, least recently used, to make room. @default 64
   */
  maxWorkers?: number;
  /** An idle worker exits after this long. @default 30000 */
  idleTimeoutMs?: number;
  /** Output over this many UTF-8 bytes is cut head + tail for the model; the whole is kept under `dataDir`. @default 32768 */
  outputBudgetBytes?: number;
  /** A hard cap applied inside the worker: larger output never crosses to the host. @default 10485760 */
  maxResultBytes?: number;
  /** How many characters (UTF-16 code units) of a call's stdout/stderr are kept. @default 65536 */
  maxLogChars?: number;
  /**
   * Which packages' tools may load native addons: `true` every package, `false` none, or a list of
   * package names (`package.json` `name`) that may, in every tier. By default they may only in the
   * process tier inside bubblewrap, where the operating system holds whatever code runs (a native
   * crash ends that package's process only); in the thread tiers, and in the process tier without a
   * sandbox, native code would run past every guard, so there they are off unless named here.
   * @default on in the process tier in bubblewrap, off elsewhere
   * @example new ToolHost({ allowAddons: ['sqlite-tools'] })
   */
  allowAddons?: boolean | readonly string[];
  /** How many selftests run at once. @default os.availableParallelism() */
  maxConcurrentSelftests?: number;
  /**
   * How tool workers are isolated; `load(path, { isolation })` overrides it per package. The
   * default is the strongest tier, on every machine: `'process'` (a process per package), in a
   * bubblewrap sandbox where bubblewrap works, else under Node's permission model with strict's
   * grants. `host.status()` says which tier each package got. Name `'worker'` or
   * `'strict'` for code the host trusts more (they start faster and use less memory).
   * @default the strongest this machine has: 'process'
   */
  isolation?: IsolationTier;
  /**
   * Send an error's stack (the tool's own frames, paths relative to its package) to the model with
   * the error's message. It is always in `outcome.error.stack` for the host. @default false
   */
  errorStacksToModel?: boolean;
  /** A parameter schema larger than this (about its JSON size, in bytes) is left out. @default 65536 */
  maxSchemaBytes?: number;
  /** A parameter schema nested deeper than this (objects and arrays) is left out. @default 32 */
  maxSchemaDepth?: number;
  /**
   * A schema of 8 KiB or more is first compiled in a trusted worker; one that takes longer than this
   * there is left out, since compiling it on the host would stop the host as long. @default 250
   */
  schemaCompileBudgetMs?: number;
  /**
   * Which packages that ask for the network in their manifest (`"toolhost": { "permissions": { "net":
   * true } }`, or a list of hosts: `"net": ["api.weather.gov", "*.example.com:443"]`) get it: `true`
   * for every package that asks, a list of package names (`package.json` `name`), or per package name
   * `true` or a list of hosts it may have of what it asks. A connection needs a rule of both sides; a
   * package that doesn't ask never gets any. The process tier in bubblewrap holds a package to its
   * hosts (through a proxy); strict on Node 25 and later can only give or deny the whole network (a
   * list gets none there); the worker tier never denies it.
   * @default false
   * @example new ToolHost({ isolation: 'process', allowNetwork: { 'weather-tools': ['api.weather.gov'] } })
   */
  allowNetwork?: NetworkAllowance;
  /** Open connections one package may hold through its egress proxy (process tier). @default 32 */
  maxNetworkConnections?: number;
  /** Bytes one connection through the egress proxy may carry, both ways. @default 268435456 */
  maxNetworkBytesPerConnection?: number;
  /**
   * Bytes the egress proxy lets a package move while one of its calls runs, both ways, tunnelled and
   * forwarded plain-HTTP bodies alike (process tier, held to hosts). Each call is charged every byte
   * the package moves while it runs (its concurrent calls' too: one process, one proxy); a call over
   * it answers `TOOL_ACCESS_DENIED` and the package's open connections are closed.
   * @default 268435456
   */
  maxNetworkBytesPerCall?: number;
  /**
   * Secret values the host grants, by name (`{ GITHUB_TOKEN: process.env.GITHUB_TOKEN }`). A package
   * gets one only if its manifest binds it to hosts (`"permissions": { "secrets": { "GITHUB_TOKEN":
   * ["api.github.com"] } }`), and then only in the process tier: its tools see a placeholder in
   * `process.env`, and its egress proxy swaps the value in on requests to the bound hosts (headers
   * and query) and back out of their answers. Every granted value is redacted (`[secret NAME]`) from
   * results, logs, events and files under `dataDir`. A secret not granted is absent.
   * @default {}
   * @example new ToolHost({ isolation: 'process', allowNetwork: ['github-tools'], secrets: { GITHUB_TOKEN: token } })
   */
  secrets?: Readonly<Record<string, string>>;
  /**
   * Hands the values themselves to packages that bind secrets in the `worker` and `strict` tiers,
   * which share the host's process and so can't keep a secret from a tool: there the tool reads the
   * value in `process.env` and can send it anywhere it reaches. Without it such a package is left
   * out (`SECRETS_REFUSED`), naming the process tier. Values are still redacted from what leaves
   * the host. @default false
   */
  exposeSecretValuesToThreadTiers?: boolean;
  /** For tests only: names the egress proxy resolves from a table, certificates its agents trust. */
  networkTesting?: NetworkTestingOptions;
  /**
   * The memory limit of each package process in the `process` tier, in MB: all of its memory (its
   * heap, `ArrayBuffer`s, native memory, the programs it starts), not only the heap.
   * Enforced by a memory cgroup where the host can make one, else by a watchdog of resident memory.
   * @default 1024
   */
  processMemoryMb?: number;
  /**
   * The snapshot store: copies of package files kept across runs, so a package loaded again (by
   * any process of the user) is linked from it rather than copied. Removable at any time.
   * @default process.env.TOOLHOST_CACHE_DIR, else $XDG_CACHE_HOME/toolhost, else ~/.cache/toolhost
   */
  cacheDir?: string;
  /**
   * The store's size bound, in MB: past it, what was least recently used is removed.
   * @default process.env.TOOLHOST_CACHE_MAX_MB, else 1024
   */
  cacheMaxMb?: number;
  /**
   * A lock file of reviewed declarations (written by `toolhost pin` or {@link ToolHost.pin}). Only
   * modules whose entry matches are offered; the rest are left out as `NOT_PINNED`,
   * `DECLARATION_CHANGED` or `CODE_CHANGED`. A missing or malformed file throws `INVALID_OPTION`.
   * @default undefined: no lock, everything that checks out is offered
   */
  lockFile?: string;
}

/** Options of {@link ToolHost.pin}. */
export interface PinOptions {
  /** The lock file to write. @default the host's `lockFile`, else `toolhost.lock.json` in the working directory */
  lockFile?: string;
}

export interface LoadOptions {
  /** This package's isolation tier. @default the host's `isolation`, else the strongest this machine has */
  isolation?: IsolationTier;
}

/** Options of {@link ToolHost.selftest}. */
export interface SelftestOptions {
  /** Caps each selftest's time; the tool's own `timeoutMs` still applies when shorter. */
  timeoutMs?: number;
}
