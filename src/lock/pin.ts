/**
 * Pinning: the entries for the modules read now, merged into a lock file (new entries added,
 * changed ones replaced, the other packages' entries kept), and what changed, for a person to read.
 */
import { existsSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolHostError } from '../boundary/errors.js';
import type { ToolInfo } from '../declaration/check.js';
import { contentDifference, declarationDifference, type LockDifference } from './difference.js';
import {
  DEFAULT_LOCK_FILE_NAME,
  entryKey,
  type LockEntry,
  readLockFile,
  writeLockFile,
} from './lock-file.js';
import { declarationDigest, lockFolderOf, lockKeyOf, type ModuleIdentity } from './pins.js';
import { bindingsDifference, type LockedBindings } from './secret-bindings.js';
import { type ServerRuns, serverRunsDifference } from './server-runs.js';

/** A module whose declaration was read and checked, to be pinned as it is now. */
export interface PinnableModule extends ModuleIdentity {
  info: ToolInfo;
  /** The content digest of the version it was read from (for a server's tool, of `server`). */
  content: string;
  /** Its files' digests (see Snapshot.files), when the snapshot has them. */
  files?: Readonly<Record<string, string>> | undefined;
  /** Its package's secret bindings (names and hosts), if it binds any. */
  secrets?: LockedBindings | undefined;
  /** An MCP server's tool: what its server runs and its grants. */
  server?: ServerRuns;
}

/** A module read and offered that a lock can't pin (see registry/pinning.ts), and why. */
export interface UnpinnableModule extends ModuleIdentity {
  tool: string;
  reason: string;
}

/** What pinning did to one entry. */
export interface PinChange {
  package: string | null;
  module: string;
  tool: string;
  /** `removed`: the package (or MCP server) no longer lists the module, so its entry went. */
  change: 'added' | 'updated' | 'unchanged' | 'removed';
  /** For `updated`: each changed field of the declaration, or `content` when only that changed. */
  difference: LockDifference[];
}

export interface PinReport {
  /** The lock file written, as an absolute path. */
  lockFile: string;
  changes: PinChange[];
  /** Modules read and offered that were not pinned, because a lock can't pin them, and why. */
  notPinned: Array<{ package: string | null; module: string; tool: string; reason: string }>;
}

/** Pins `modules` in `file` (created when missing; a file that is not a lock is refused, not overwritten). */
export function pinModules(
  file: string,
  modules: readonly PinnableModule[],
  unpinnable: readonly UnpinnableModule[] = [],
): PinReport {
  const lockFile = resolve(file);
  for (const module of modules) refuseLockInside(lockFile, module);
  const before = existsSync(lockFile) ? readLockFile(lockFile) : [];
  const folder = lockFolderOf(lockFile);
  const entries = new Map(before.map((entry) => [entryKey(entry), entry]));
  const changes: PinChange[] = [];
  const pinnedPackages = new Set<string>();
  /** Each pinned server's entries begin with this (`servers.json#fs/`). */
  const pinnedServers = new Set<string>();
  const fresh = new Set<string>();
  for (const module of modules) {
    const key = lockKeyOf(module, folder);
    const entry: LockEntry = {
      ...key,
      tool: module.info.name,
      declaration: module.info,
      declarationDigest: declarationDigest(module.info),
      content: module.content,
      ...(module.files === undefined ? {} : { files: { ...module.files } }),
      ...(module.secrets === undefined ? {} : { secrets: module.secrets }),
    };
    if (module.server !== undefined) {
      entry.server = module.server;
      pinnedServers.add(
        `${lockKeyOf({ ...module, path: `${module.root}#${module.server.name}` }, folder).module}/`,
      );
    }
    const id = entryKey(entry);
    fresh.add(id);
    if (entry.package !== null) pinnedPackages.add(entry.package);
    const old = entries.get(id);
    entries.set(id, entry);
    const change: PinChange = { ...key, tool: entry.tool, change: 'added', difference: [] };
    if (old !== undefined) {
      if (old.declarationDigest !== entry.declarationDigest) {
        change.change = 'updated';
        change.difference = declarationDifference(old.declaration, entry.declaration);
      } else if (bindingsDifference(old.secrets, entry.secrets).length > 0) {
        change.change = 'updated';
        change.difference = bindingsDifference(old.secrets, entry.secrets);
      } else if (old.content !== entry.content && old.server !== undefined && entry.server !== undefined) {
        change.change = 'updated';
        const { runs, grants } = serverRunsDifference(old.server, entry.server);
        change.difference = [...runs, ...grants];
      } else if (old.content !== entry.content) {
        change.change = 'updated';
        change.difference = contentDifference(old, entry);
      } else {
        change.change = 'unchanged';
      }
    }
    changes.push(change);
  }
  // A pinned package's modules (or server's tools) that it no longer lists: their entries would
  // only pin the past.
  const ofPinned = (entry: LockEntry) =>
    entry.package === null
      ? entry.server !== undefined && [...pinnedServers].some((prefix) => entry.module.startsWith(prefix))
      : pinnedPackages.has(entry.package);
  for (const [id, entry] of entries) {
    if (fresh.has(id) || !ofPinned(entry)) continue;
    entries.delete(id);
    changes.push({
      package: entry.package,
      module: entry.module,
      tool: entry.tool,
      change: 'removed',
      difference: [],
    });
  }
  writeLockFile(lockFile, [...entries.values()]);
  const notPinned = unpinnable.map((module) => ({
    ...lockKeyOf(module, folder),
    tool: module.tool,
    reason: module.reason,
  }));
  return { lockFile, changes, notPinned };
}

/**
 * A lock inside a package it pins would change that package's content each time it is written,
 * and the pin would never match; at the package's top under its default name it is left out of
 * the content.
 */
function refuseLockInside(lockFile: string, module: PinnableModule): void {
  if (module.kind !== 'package') return;
  const inside = relative(module.root, join(lockFolderOf(lockFile), basename(lockFile)));
  if (
    inside === DEFAULT_LOCK_FILE_NAME ||
    inside === '..' ||
    inside.startsWith(`..${sep}`) ||
    isAbsolute(inside)
  )
    return;
  throw new ToolHostError(
    'INVALID_OPTION',
    `The lock file ${lockFile} is inside the package ${module.root}, so writing it would change what it pins: keep it outside the package, or at its top as ${DEFAULT_LOCK_FILE_NAME}`,
  );
}
