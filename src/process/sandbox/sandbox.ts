/**
 * The process tier's OS sandbox on Linux: bubblewrap (`bwrap`), driven directly. A package's process
 * starts in new namespaces (user, pid, ipc, uts, cgroup, and network unless granted) with a file
 * system built from nothing: the system's programs and libraries read-only (what Node needs), Node
 * itself, toolhost's own code read-only, the version's snapshot read-only, its tmp folder
 * read-write, a private `/proc` and a minimal `/dev`; everything else, the root included, read-only
 * and empty. No capabilities, no new user namespaces inside, a session of its own, and it dies with
 * the host.
 *
 * Chosen over `@anthropic-ai/sandbox-runtime` (docs/isolation.md, "The process tier"): that library needs Node
 * 22.12, starts from the whole file system readable (`--ro-bind / /`) and masks what is denied,
 * filters the network through proxies in the calling process that Node's `fetch` and sockets don't
 * use by default, and needs socat and ripgrep besides bubblewrap.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_JSON, srcFile, workersFile } from '../../own-files.js';
import { isWithin } from '../../shared/paths.js';
import { CHILD_MAIN } from '../child/child-entry.js';

export type SandboxSupport =
  | {
      available: true;
      bwrap: string;
      /** bubblewrap 0.8 and later can keep the process from making user namespaces of its own. */
      disableUserns: boolean;
    }
  | { available: false; reason: string };

/** What one package's process may see. */
export interface SandboxPaths {
  /** Read-only: the version's snapshot (its dependency tree and version folders). */
  readOnly: string[];
  /** Read-write: the domain's tmp folder (each call's tmpDir is inside it). */
  tmpDir: string;
  /** Whether the package has the network (its manifest asks and the host allows). */
  network: boolean;
  /**
   * The folder of the package's egress proxy socket (a package held to a list of hosts): bound in,
   * it is the process's only way out of its network namespace.
   */
  egress?: string;
  /**
   * A spare process (spares.ts): `folder`, which only the host writes, read-only at `at`, so that
   * the snapshot the host later mirrors into it appears at the snapshot's own path.
   */
  overlay?: { folder: string; at: string };
  /**
   * What runs, read-only: toolhost's own code and Node ({@link codePaths}) unless given. An MCP
   * server (src/mcp/servers) names its own interpreter and package here instead.
   */
  code?: readonly string[];
  /** Read-write besides `tmpDir`: an MCP server's `write` grants. */
  readWrite?: readonly string[];
  /** The working directory; the read-only root unless given. */
  workingDirectory?: string;
}

/** The system folders Node and the programs a tool starts need; each only if it exists. */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** The dynamic loader's cache: startup works without it, but reads every library folder. */
const LOADER_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d'];
/** What name resolution and TLS read, for a package that has the network. */
const NETWORK_FILES = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/gai.conf',
  '/etc/host.conf',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
];

let cachedCodePaths: string[] | undefined;

/**
 * What the child's own code reads: toolhost's compiled `src` and `workers`, its package.json (which
 * makes them ES modules), undici's package folder, and Node. Real paths: Node loads by real path.
 */
export function codePaths(): string[] {
  cachedCodePaths ??= findCodePaths();
  return cachedCodePaths;
}

function findCodePaths(): string[] {
  const require = createRequire(import.meta.url);
  // undici's package folder: the egress agents (network/child-agents.ts) load it in the process.
  const undiciEntry = realpathSync(require.resolve('undici'));
  const undiciRoot = dirname(undiciEntry);
  return [
    undiciRoot,
    realpathSync(fileURLToPath(srcFile(''))),
    realpathSync(fileURLToPath(workersFile(''))),
    realpathSync(fileURLToPath(PACKAGE_JSON)),
    realpathSync(process.execPath),
  ];
}

/** The first executable file `name` in the folders of `PATH` (the host's own, unless given). */
export function findOnPath(name: string, path = process.env['PATH'] ?? ''): string | undefined {
  for (const folder of path.split(delimiter)) {
    if (folder === '') continue;
    const candidate = join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** Binds for the system folders, keeping a folder that is a link (merged /usr) a link. */
function systemArgs(): { args: string[]; bound: string[] } {
  const args: string[] = [];
  const bound: string[] = [];
  for (const folder of SYSTEM_FOLDERS) {
    try {
      const stat = lstatSync(folder);
      if (stat.isSymbolicLink()) {
        args.push('--symlink', readlinkSync(folder), folder);
      } else if (stat.isDirectory()) {
        args.push('--ro-bind', folder, folder);
        bound.push(folder);
      }
    } catch {
      // Not on this system.
    }
  }
  for (const file of LOADER_FILES) args.push('--ro-bind-try', file, file);
  return { args, bound };
}

/** The `bwrap` arguments (up to and including `--`) for a package's process. */
export function sandboxArgs(paths: SandboxPaths, options: { disableUserns: boolean }): string[] {
  const args = ['--unshare-all', '--unshare-user', ...(options.disableUserns ? ['--disable-userns'] : [])];
  if (paths.network) args.push('--share-net');
  const system = systemArgs();
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', ...system.args);
  if (paths.network) for (const file of NETWORK_FILES) args.push('--ro-bind-try', file, file);
  args.push('--proc', '/proc', '--dev', '/dev');
  for (const path of [...(paths.code ?? codePaths()), ...paths.readOnly]) {
    // Node installed under /usr is there already.
    if (system.bound.some((folder) => isWithin(folder, path))) continue;
    args.push('--ro-bind', path, path);
  }
  // Its working directory is the read-only root: a relative write fails, as under strict, rather
  // than landing beside other calls' tmpDirs.
  if (paths.egress !== undefined) args.push('--ro-bind', paths.egress, paths.egress);
  if (paths.overlay !== undefined) args.push('--ro-bind', paths.overlay.folder, paths.overlay.at);
  for (const path of paths.readWrite ?? []) args.push('--bind', path, path);
  args.push('--bind', paths.tmpDir, paths.tmpDir, '--remount-ro', '/');
  args.push('--chdir', paths.workingDirectory ?? '/', '--');
  return args;
}

let support: Promise<SandboxSupport> | undefined;

/**
 * The command that starts a package process: Node with `nodeFlags` on the child's entry point,
 * inside bubblewrap when this machine has it. `mode` is what the child is for (its argument).
 */
export function childCommand(
  paths: SandboxPaths,
  sandbox: SandboxSupport,
  options: { nodeFlags: string[]; mode: string },
): [command: string, args: string[]] {
  const nodeArgs = [...options.nodeFlags, CHILD_MAIN, options.mode];
  const node = realpathSync(process.execPath);
  return sandbox.available
    ? [sandbox.bwrap, [...sandboxArgs(paths, sandbox), node, ...nodeArgs]]
    : [node, nodeArgs];
}

/**
 * Whether this machine can sandbox a package's process: Linux, `bwrap` on the host's PATH, and a
 * trial run with the arguments every package's process gets (user namespaces may be off, or bwrap
 * refused by a security module). Tried once per process.
 */
export function sandboxSupport(): Promise<SandboxSupport> {
  support ??= probe().catch((error: unknown) => ({
    available: false,
    reason: `bwrap could not be tried: ${String(error)}`,
  }));
  return support;
}

async function probe(): Promise<SandboxSupport> {
  if (process.platform !== 'linux') {
    return { available: false, reason: `there is no bubblewrap sandbox on ${process.platform}` };
  }
  const bwrap = findOnPath('bwrap');
  if (bwrap === undefined) return { available: false, reason: 'bubblewrap (bwrap) is not installed' };
  const tmpDir = await mkdtemp(join(tmpdir(), 'toolhost-sandbox-probe-'));
  try {
    const outcome = await trial(bwrap, tmpDir, true);
    // Before 0.8 bubblewrap has no --disable-userns: the rest of the sandbox still holds.
    if (!outcome.available && outcome.reason.includes('disable-userns'))
      return await trial(bwrap, tmpDir, false);
    return outcome;
  } finally {
    await rm(tmpDir, { recursive: true, force: true }).catch(() => {});
  }
}

/** One trial run of the sandbox every package's process gets, with Node in it. */
function trial(bwrap: string, tmpDir: string, disableUserns: boolean): Promise<SandboxSupport> {
  const node = realpathSync(process.execPath);
  const args = [...sandboxArgs({ readOnly: [], tmpDir, network: false }, { disableUserns }), node, '-e', ''];
  return new Promise<SandboxSupport>((resolve) => {
    const trial = spawn(bwrap, args, { stdio: ['ignore', 'ignore', 'pipe'], env: {} });
    let stderr = '';
    trial.stderr.setEncoding('utf8');
    trial.stderr.on('data', (chunk: string) => {
      if (stderr.length < 2000) stderr += chunk;
    });
    trial.once('error', (error) =>
      resolve({ available: false, reason: `bwrap could not run: ${error.message}` }),
    );
    trial.once('close', (code, signal) => {
      if (code === 0) {
        resolve({ available: true, bwrap, disableUserns });
        return;
      }
      const line =
        stderr.split('\n').find((text) => text.trim() !== '') ?? `it exited with ${signal ?? code}`;
      resolve({ available: false, reason: `bwrap refused to start a sandbox here: ${line.trim()}` });
    });
  });
}
