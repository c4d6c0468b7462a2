/**
 * Isolation tiers: how a trust domain's workers are started.
 *
 * The default is the strongest tier, on every machine: `process` ({@link DEFAULT_TIER}; what holds a
 * package in it here is `processTierHold` in src/process/sandbox/process-tier.ts); the thread tiers
 * are chosen by name, for code the host trusts more.
 *
 * - `worker`: worker threads with heap, time and environment bounds and in-process
 *   hardening. A tool can still read and write any file the host can, spawn processes and start
 *   workers of its own.
 * - `strict`: the same workers under Node's permission model, set per worker through `execArgv`
 *   (Node 20: `--experimental-permission`; Node 22 and later: `--permission`). File reads only inside
 *   the tool's snapshot and what the worker code itself needs; file writes only inside the domain's
 *   tmp folder; no child processes, no nested workers, no addons, no WASI, no inspector.
 *
 * Node 25 and later also deny the network unless `--allow-net` is given, which strict gives only to a
 * package that asks for it and that the host allows ({@link grantsNetwork}).
 *
 * - `process`: each package version's calls in processes of its own, one call at a time in each (as
 *   in a worker), with a memory limit over each whole process, and on Linux with bubblewrap an OS
 *   sandbox around it (see `src/process/`). Inside the sandbox its processes get the worker tier's
 *   flags; where there is no sandbox, strict's (see `src/process/process-domains.ts`), so its files
 *   are still confined.
 *
 * Node's documentation says the permission model "does not protect against malicious code": strict
 * is defence in depth, not a sandbox. docs/isolation.md lists what it does not contain (network before
 * Node 25, already-open file descriptors, memory outside the heap, engine bugs).
 */
import { createRequire } from 'node:module';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolHostError } from '../boundary/errors.js';
import { srcFile, workersFile } from '../own-files.js';
import { type NetworkAllowance, type NetworkAsk, networkGrant } from '../process/network/grant.js';
import { isWithin } from '../shared/paths.js';

export type IsolationTier = 'worker' | 'strict' | 'process';

export const ISOLATION_TIERS: readonly IsolationTier[] = ['worker', 'strict', 'process'];

/**
 * The tier of a host and a command that name none: the strongest, on every machine, since a process
 * per package is the boundary against a hostile tool (the thread tiers share the host's process).
 */
export const DEFAULT_TIER: IsolationTier = 'process';

export interface DomainPaths {
  /** The package folder, or the single module file (real paths, as `host.load` resolved them). */
  domain: string;
  /**
   * The folder holding the snapshot the domain's modules are imported from (see snapshot/snapshot.ts):
   * what a strict worker may read of the domain (none, where there is no snapshot).
   */
  snapshot?: string;
  /** The dependency tree kept in the store that the snapshot leads to, if any (`Snapshot.keptTree`). */
  keptTree?: string;
  /** The folder under which this domain's calls get their tmpDirs. */
  tmpDir: string;
}

const nodeFlags = process.allowedNodeEnvironmentFlags;

/** Node 22 renamed `--experimental-permission` to `--permission`; use whichever this Node knows. */
const PERMISSION_FLAG = nodeFlags.has('--permission') ? '--permission' : '--experimental-permission';

/**
 * Every worker toolhost starts loads ES modules with `import()` only, never through require(esm)
 * (on by default from Node 20.19 and 22.12). A worker terminated while `require()` builds the
 * `__esModule` facade of an ES module with a default export fails a native assertion in Node
 * (`CreateRequiredModuleFacade`), which aborts the whole process: the host. piscina `require()`s its
 * task file first, so the call worker's own start went that way, and a tool can `require()` ES
 * modules of its own until its timeout ends the worker. With require(esm) off, piscina falls back
 * to `import()`, and a tool's `require()` of an ES module throws `ERR_REQUIRE_ESM`, as on Node 20.18.
 * Releases without require(esm) (before 20.17) don't know the flag and don't need it.
 */
export const WORKER_MODULE_FLAGS: readonly string[] = nodeFlags.has('--experimental-require-module')
  ? ['--no-experimental-require-module']
  : [];

/** Node 25 added the network to the permission model: without `--allow-net` a worker has none. */
export const STRICT_DENIES_NETWORK = nodeFlags.has('--allow-net');

/**
 * Whether strict workers can give back the read access Node grants them to the host's working
 * directory (see `workers/guard/strict-preload.cts`): that takes `process.permission.drop`, which Node
 * added in 24.20 and 26.3. It can't be asked for on the host's thread (`process.permission` exists
 * only under the permission model), hence the versions.
 */
export const STRICT_HIDES_WORKING_DIRECTORY = ((): boolean => {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major >= 27 || (major === 26 && minor >= 3) || (major === 24 && minor >= 20);
})();

/** Preloaded into every strict worker: see `workers/guard/strict-preload.cts`. */
const STRICT_PRELOAD = fileURLToPath(workersFile('guard/strict-preload.cjs'));

/**
 * What the worker code itself reads: toolhost's compiled `dist/src` and `dist/workers` folders (the
 * workers import from `src/`) and piscina's `dist` folder, where its worker lives beside its entry
 * point. All public package code. Real paths, because Node loads modules by their real path and the
 * permission model checks the path it is given.
 */
function workerCodePaths(): string[] {
  const piscinaEntry = createRequire(import.meta.url).resolve('piscina');
  return [fileURLToPath(srcFile('')), fileURLToPath(workersFile('')), dirname(piscinaEntry)];
}

let cachedWorkerCodePaths: string[] | undefined;

/**
 * Whether this Node's permission model is one strict can rest on: it covers WASI (`--allow-wasi`
 * exists from Node 20.16; before that, WASI was not restricted by it). The process tier without a
 * sandbox confines its workers with strict's flags only where this holds.
 */
export const PERMISSION_MODEL_USABLE = nodeFlags.has(PERMISSION_FLAG) && nodeFlags.has('--allow-wasi');

/**
 * Throws when this Node can't run a tier. Strict needs a permission model that also covers WASI
 * (`--allow-wasi` exists from Node 20.16): before that, WASI was not restricted by it.
 */
export function assertTierSupported(tier: IsolationTier): void {
  if (tier !== 'strict') return;
  if (!PERMISSION_MODEL_USABLE) {
    throw new ToolHostError(
      'INVALID_OPTION',
      `Expected a Node.js whose permission model covers WASI (20.16 or later) for \`isolation: 'strict'\`, got ${process.version}`,
    );
  }
}

/**
 * The `execArgv` of a domain's workers (call workers and declaration readers) for a tier.
 *
 * Strict read scope: the domain's snapshot (its own files and what it can import of its
 * `node_modules`), nothing of the package folder itself: not its devDependencies, its `.git` or a file
 * written since the version was read. A dependency hoisted to a folder above the package, or linked
 * from outside it, is in no snapshot, so a strict package must carry its own dependencies. Write
 * scope: the domain's tmp folder, which holds every call's tmpDir — per-worker flags can't narrow it
 * to one call, so calls of one domain running at the same time can see each other's tmpDirs.
 *
 * @example
 * workerExecArgv(
 *   'strict',
 *   { domain: '/srv/tools/weather', snapshot: '/tmp/toolhost-1/snapshots/srv-tools-weather/nm-4f2a-1', tmpDir: '/tmp/toolhost-1/ab12' },
 *   { allowAddons: false },
 * )
 */
export function workerExecArgv(
  tier: IsolationTier,
  paths: DomainPaths,
  options: { allowAddons: boolean; allowNetwork?: boolean },
): string[] {
  const addons = options.allowAddons ? [] : ['--no-addons'];
  // The process tier's boundary is its process (and sandbox); inside, its tools run as a worker's would.
  if (tier === 'worker' || tier === 'process') return [...WORKER_MODULE_FLAGS, ...addons];

  assertTierSupported(tier);
  cachedWorkerCodePaths ??= workerCodePaths();
  const tmpDir = resolve(paths.tmpDir);
  // Node grants a whole folder only if it exists when the worker starts; the tmp folder is made by
  // the first call, so it is granted as `tmpDir/*`, which Node matches by prefix.
  const grant = (path: string) => (path === tmpDir ? `${path}${sep}*` : path);
  const snapshot = [paths.snapshot, paths.keptTree].filter((path) => path !== undefined);
  const reads = minimalPaths([...snapshot, tmpDir, ...cachedWorkerCodePaths]).map(grant);
  const writes = minimalPaths([tmpDir]).map(grant);
  return [
    ...WORKER_MODULE_FLAGS,
    PERMISSION_FLAG,
    ...reads.map((path) => `--allow-fs-read=${path}`),
    ...writes.map((path) => `--allow-fs-write=${path}`),
    ...(options.allowAddons ? ['--allow-addons'] : addons),
    ...(options.allowNetwork === true && STRICT_DENIES_NETWORK ? ['--allow-net'] : []),
    // Runs before piscina's worker code and before any tool (dist/workers is granted above).
    `--require=${STRICT_PRELOAD}`,
    // Node 20 prints an ExperimentalWarning for the permission model in every worker, before the
    // worker can capture its stderr: it would land on the host's stderr.
    ...(nodeFlags.has('--disable-warning') ? ['--disable-warning=ExperimentalWarning'] : []),
  ];
}

/**
 * Whether a package's workers get the whole network: it asks for it in its manifest and the host's
 * `allowNetwork` grants it, with no list of hosts on either side ({@link networkGrant}). A list is
 * more than the permission model can hold a worker to (`--allow-net` is all or nothing), so a
 * package held to hosts gets none here. A single module file has no manifest, so it never asks.
 */
export function grantsNetwork(
  allowNetwork: NetworkAllowance,
  source: { packageName: string | undefined; permissions: { net: NetworkAsk } },
): boolean {
  return networkGrant(allowNetwork, source).kind === 'all';
}

/** What the permission model can't contain before Node 25, as the host's notices name it. */
export const NETWORK_GAP = 'the network (Node 25 and later deny it)';

/**
 * What strict can't contain on this Node, beyond what no Node contains (docs/isolation.md): said once per host
 * that uses strict. Empty on Node 26.3 and later.
 */
export function strictTierGaps(): string[] {
  const gaps: string[] = [];
  if (!STRICT_DENIES_NETWORK) gaps.push(NETWORK_GAP);
  // Node 20's permission model grants workers nothing implicitly; 22 and later grant the working
  // directory, and only some releases can take it back.
  if (PERMISSION_FLAG === '--permission' && !STRICT_HIDES_WORKING_DIRECTORY) {
    gaps.push("reads of the host's working directory (Node 24.20 and 26.3 and later deny them)");
  }
  return gaps;
}

/**
 * Paths for `--allow-fs-*`: absolute, without trailing separators, none inside another. Node 20
 * aborts the whole process (an assertion in its path tree) when one grant repeats another, even
 * written differently (`/a`, `/a/`, `/a/*`), so a repeat must never reach it. A `*` in a path is a
 * wildcard to Node and would widen the grant, and Node has no way to escape it; older Node 20
 * releases split a grant at commas.
 */
function minimalPaths(paths: string[]): string[] {
  const normalized = paths.map((path) => {
    if (path.includes('*') || path.includes(',')) {
      throw new ToolHostError(
        'INVALID_OPTION',
        `Expected no \`*\` or \`,\` in a path that strict isolation grants (Node reads them as a wildcard and a list), got ${JSON.stringify(path)}`,
      );
    }
    return resolve(path);
  });
  const unique = [...new Set(normalized)];
  return unique.filter((path) => !unique.some((outer) => outer !== path && isWithin(outer, path)));
}
