/**
 * The lock a host enforces: which module is which entry, and whether what was read now is what
 * was pinned. A module is offered only when its entry's declaration digest and content digest
 * both match; otherwise it is withheld with `NOT_PINNED`, `DECLARATION_CHANGED` or `CODE_CHANGED`
 * and the difference a reviewer needs.
 *
 * The file is read when the host is built (a bad one throws there) and again whenever it changed
 * (by its size, modification time and inode), so pinning while a host runs takes effect at its
 * next load or refresh. A later version that can't be read keeps the last good one in force:
 * never "everything allowed".
 */
import { realpathSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import type { ToolInfo } from '../declaration/check.js';
import { showHidden } from '../declaration/visible-text.js';
import { digestOf } from './canonical.js';
import { changedFiles, contentDifference, declarationDifference, type LockDifference } from './difference.js';
import { entryKey, type LockEntry, readLockFile } from './lock-file.js';
import { bindingsDifference, type LockedBindings } from './secret-bindings.js';
import { type ServerRuns, serverRunsDifference } from './server-runs.js';

/** Why a module is withheld under a lock. */
export type PinCode = 'NOT_PINNED' | 'DECLARATION_CHANGED' | 'CODE_CHANGED';

export const PIN_CODES: readonly string[] = ['NOT_PINNED', 'DECLARATION_CHANGED', 'CODE_CHANGED'];

export interface PinVerdict {
  code: PinCode;
  reason: string;
  difference: LockDifference[];
}

/** What names a module in a lock: its source's kind, package name and root, and its file. */
export interface ModuleIdentity {
  kind: 'package' | 'module' | 'servers';
  packageName: string | undefined;
  root: string;
  path: string;
}

const digests = new WeakMap<ToolInfo, string>();

/** The declaration digest of a checked declaration, computed once per read. */
export function declarationDigest(info: ToolInfo): string {
  let digest = digests.get(info);
  if (digest === undefined) {
    digest = digestOf(info);
    digests.set(info, digest);
  }
  return digest;
}

/**
 * A module's place in a lock: by its package's name and its path in the package (the same
 * wherever the package is installed), or, with no package name, by its path from the lock's folder.
 */
export function lockKeyOf(module: ModuleIdentity, lockFolder: string): Pick<LockEntry, 'package' | 'module'> {
  if (module.kind === 'package' && module.packageName !== undefined) {
    return { package: module.packageName, module: portable(relative(module.root, module.path)) };
  }
  return { package: null, module: portable(relative(lockFolder, module.path)) };
}

/** The real folder a lock file is in (paths of modules are real paths too). */
export function lockFolderOf(file: string): string {
  const folder = dirname(resolve(file));
  try {
    return realpathSync(folder);
  } catch {
    return folder;
  }
}

export class Pins {
  /** The lock file, as an absolute path. */
  readonly file: string;
  readonly folder: string;
  readonly #onProblem: (message: string) => void;
  #entries = new Map<string, LockEntry>();
  #identity = '';
  /** Bumped with every new version of the file: verdicts of an older one are not reused. */
  #version = 0;
  readonly #verdicts = new WeakMap<
    ToolInfo,
    { version: number; key: string; content: string | undefined; verdict: PinVerdict | undefined }
  >();

  /** Reads the lock; throws `INVALID_OPTION` when it is missing or not a lock. */
  constructor(file: string, onProblem: (message: string) => void) {
    this.file = resolve(file);
    this.folder = lockFolderOf(this.file);
    this.#onProblem = onProblem;
    this.#identity = identityOf(this.file);
    this.#use(readLockFile(this.file));
  }

  /** Reads the file again if it changed. @returns whether the entries in force changed */
  refresh(): boolean {
    const identity = identityOf(this.file);
    if (identity === this.#identity) return false;
    this.#identity = identity;
    try {
      this.#use(readLockFile(this.file));
      return true;
    } catch (error) {
      this.#onProblem(`${(error as Error).message}; the lock read before stays in force`);
      return false;
    }
  }

  /**
   * Undefined when `info`, read from content `content` (whose files' digests are `files`), is what
   * the lock pins for the module. For an MCP server's tool, `content` is the digest of `server`,
   * what the server runs now.
   */
  verdict(
    module: ModuleIdentity,
    info: ToolInfo,
    content: string | undefined,
    files?: Readonly<Record<string, string>>,
    secrets?: LockedBindings,
    server?: ServerRuns,
  ): PinVerdict | undefined {
    const key = entryKey(lockKeyOf(module, this.folder));
    const known = this.#verdicts.get(info);
    // The bindings are the package's manifest: its content digest covers them.
    if (known?.version === this.#version && known.key === key && known.content === content)
      return known.verdict;
    const verdict = this.#judge(key, info, content, files, secrets, server);
    this.#verdicts.set(info, { version: this.#version, key, content, verdict });
    return verdict;
  }

  #judge(
    key: string,
    info: ToolInfo,
    content: string | undefined,
    files: Readonly<Record<string, string>> | undefined,
    secrets: LockedBindings | undefined,
    server: ServerRuns | undefined,
  ): PinVerdict | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      return {
        code: 'NOT_PINNED',
        reason: `it is not pinned in ${this.file}: review it, then pin it (toolhost pin)`,
        difference: [],
      };
    }
    if (declarationDigest(info) !== entry.declarationDigest) {
      const difference = declarationDifference(entry.declaration, info);
      return {
        code: 'DECLARATION_CHANGED',
        reason: `what the model reads changed since it was pinned in ${this.file} (${difference.map((change) => change.field).join(', ')}): review it, then pin it again`,
        difference,
      };
    }
    const bindings = bindingsDifference(entry.secrets, secrets);
    if (bindings.length > 0) {
      return {
        code: 'CODE_CHANGED',
        reason: `the package's secret bindings changed since it was pinned in ${this.file} (${bindings.map((change) => change.field).join(', ')}): review them, then pin it again`,
        difference: bindings,
      };
    }
    if (content !== entry.content && entry.server !== undefined && server !== undefined) {
      return this.#serverChanged(entry.server, server);
    }
    if (content !== entry.content) {
      if (content === undefined) {
        return {
          code: 'CODE_CHANGED',
          reason: `the package's content changed since it was pinned in ${this.file} (its declaration did not): review it, then pin it again`,
          difference: [{ field: 'content', before: entry.content }],
        };
      }
      const now = { content, files };
      const changed = changedFiles(entry, now);
      return {
        code: 'CODE_CHANGED',
        reason: `the package's content changed since it was pinned in ${this.file} (${changedList(changed)}; its declaration did not): review it, then pin it again`,
        difference: contentDifference(entry, now),
      };
    }
    return undefined;
  }

  /** An MCP server's tool whose declaration is as pinned, but not what its server runs or may do. */
  #serverChanged(before: ServerRuns, after: ServerRuns): PinVerdict {
    const { runs, grants } = serverRunsDifference(before, after);
    const parts: string[] = [];
    if (runs.length > 0)
      parts.push(`what its server runs changed (${runs.map((change) => change.field).join(', ')})`);
    if (grants.length > 0)
      parts.push(`its server's grants changed (${grants.map((change) => change.field).join(', ')})`);
    return {
      code: 'CODE_CHANGED',
      reason: `${parts.join(' and ')} since it was pinned in ${this.file} (its declaration did not): review it, then pin it again`,
      difference: [...runs, ...grants],
    };
  }

  #use(entries: LockEntry[]): void {
    this.#entries = new Map(entries.map((entry) => [entryKey(entry), entry]));
    this.#version += 1;
  }
}

/** The files named in a reason at most; its difference lists up to MAX_DIFFERENCES. */
const NAMED_FILES = 5;

/** `changed: tools/a.js, lib/b.js and 3 more`, or what can't be named and why. */
function changedList(changed: readonly string[] | undefined): string {
  if (changed === undefined)
    return 'which files changed is not known: the lock has no digest per file; pin it again to keep them';
  if (changed.length === 0) return 'no file changed: a folder was added or removed';
  const named = changed.slice(0, NAMED_FILES).map((path) => showHidden(path));
  const more = changed.length - named.length;
  return `changed: ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** What tells one version of the file from another without reading it. */
function identityOf(file: string): string {
  try {
    const info = statSync(file, { bigint: true });
    return `${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
  } catch {
    return 'missing';
  }
}

function portable(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}
