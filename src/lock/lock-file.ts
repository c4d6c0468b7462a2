/**
 * The lock file: the reviewed declarations, one entry per tool module, as plain sorted JSON meant to
 * be committed and read in a diff. A file that is missing, is not JSON, names another format or
 * holds an entry that doesn't add up is a caller's mistake (`INVALID_OPTION`), never "no lock".
 *
 * ```json
 * { "format": "toolhost-lock/1",
 *   "tools": [{ "content": "sha256:…", "declaration": { "name": "weather", … },
 *               "declarationDigest": "sha256:…", "module": "tools/weather.js",
 *               "files": { "package.json": "sha256:…", "tools/weather.js": "sha256:…" },
 *               "package": "weather-tools", "tool": "weather" }] }
 * ```
 *
 * An MCP server's tool is an entry too (`package` null, `module` `servers.json#fs/read_file`), with
 * a `server` object: what its server runs and its grants (see {@link ServerRuns}).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { ToolHostError } from '../boundary/errors.js';
import type { ToolInfo } from '../declaration/check.js';
import { findHiddenInDeclaration, showHidden } from '../declaration/visible-text.js';
import { digestOf, sortedCopy } from './canonical.js';
import { checkLockedBindings, type LockedBindings } from './secret-bindings.js';
import { type ServerRuns, serverRunsDigest, serverRunsProblem } from './server-runs.js';

/** The lock file's name when none is given (`toolhost pin`, `--lock`). */
export const DEFAULT_LOCK_FILE_NAME = 'toolhost.lock.json';

/** The format marker: a lock of another format is refused, not guessed at. */
export const LOCK_FORMAT = 'toolhost-lock/1';

/** One pinned tool module. */
export interface LockEntry {
  /** The package's `name`; null for a module loaded on its own or a package without a name. */
  package: string | null;
  /** The module's path in its package, or (with no package name) relative to the lock file's folder. */
  module: string;
  /** The tool's name (also in `declaration`), for people reading the lock. */
  tool: string;
  /** The checked declaration as it was reviewed: every field a model or a client sees. */
  declaration: ToolInfo;
  /** `sha256:` of the declaration's canonical JSON: what is compared. */
  declarationDigest: string;
  /**
   * `sha256:` of the package version's content: what runs. For an MCP server's tool, the digest
   * of `server`.
   */
  content: string;
  /**
   * What `content` is made of, by path (each own file, and `node_modules` as one): only to name the
   * files that changed; `content` is what is compared. Missing in locks written before toolhost
   * kept them, and for a package of more files than a lock keeps.
   */
  files?: Record<string, string>;
  /** The package's secret bindings (names and hosts, never values); absent when it binds none. */
  secrets?: LockedBindings;
  /** An MCP server's tool only: what its server runs and its grants (absent for a module). */
  server?: ServerRuns;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Which entry a module is: its package and its path there. */
export function entryKey(entry: Pick<LockEntry, 'package' | 'module'>): string {
  return `${entry.package ?? ''}\0${entry.module}`;
}

/** Reads and checks a lock file; throws `INVALID_OPTION` saying what is wrong with it. */
export function readLockFile(file: string): LockEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw lockError(
      file,
      code === 'ENOENT' ? 'it does not exist (toolhost pin writes it)' : `it can't be read (${code})`,
    );
  }
  return parseLock(text, file);
}

/** The entries of a lock file's text. */
export function parseLock(text: string, file: string): LockEntry[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw lockError(file, `it is not valid JSON: ${(error as Error).message}`);
  }
  if (!isRecord(document)) throw lockError(file, 'it is not a JSON object');
  if (document['format'] !== LOCK_FORMAT) {
    const format = document['format'];
    throw lockError(
      file,
      `its format is ${typeof format === 'string' ? JSON.stringify(format.slice(0, 80)) : 'not named'}, expected "${LOCK_FORMAT}"`,
    );
  }
  const tools = document['tools'];
  if (!Array.isArray(tools)) throw lockError(file, '"tools" is not an array');
  const seen = new Set<string>();
  const entries = tools.map((item, index) => {
    const entry = checkEntry(item);
    if (typeof entry === 'string') throw lockError(file, `tools[${index}] ${entry}`);
    const key = entryKey(entry);
    if (seen.has(key))
      throw lockError(file, `tools[${index}] pins ${showHidden(entry.module)} a second time`);
    seen.add(key);
    return entry;
  });
  // What a reviewer reads in a diff must be all there is: a key given twice (JSON.parse keeps the
  // last one), a field of no meaning or an entry out of order could show one thing and pin another.
  if (text.replaceAll('\r\n', '\n') !== renderLock(entries)) {
    throw lockError(
      file,
      'it is not as toolhost pin writes it (sorted keys and entries, two-space indents, nothing else): pin again to rewrite it',
    );
  }
  return entries;
}

function checkEntry(item: unknown): LockEntry | string {
  if (!isRecord(item)) return 'is not an object';
  const {
    package: name,
    module,
    tool,
    declaration,
    declarationDigest,
    content,
    files,
    secrets,
    server,
  } = item;
  const badSecrets = checkLockedBindings(secrets);
  if (badSecrets !== undefined) return badSecrets;
  if (name !== null && (typeof name !== 'string' || name === '')) return 'has no "package" name or null';
  if (typeof module !== 'string' || module === '') return 'has no "module" path';
  if (typeof tool !== 'string') return 'has no "tool" name';
  if (!isRecord(declaration)) return 'has no "declaration" object';
  if (typeof declarationDigest !== 'string' || !DIGEST.test(declarationDigest))
    return 'has no "declarationDigest" (sha256:<64 hex digits>)';
  if (typeof content !== 'string' || !DIGEST.test(content))
    return 'has no "content" (sha256:<64 hex digits>)';
  if (files !== undefined && !(isRecord(files) && Object.values(files).every((digest) => isDigest(digest))))
    return `(${showHidden(module)}): its "files" is not an object of sha256:<64 hex digits> by path`;
  // The digest is what is enforced; the declaration beside it is what a difference is shown
  // against. An entry whose two disagree was edited by hand and would show a false "before".
  if (digestOf(declaration) !== declarationDigest)
    return `(${showHidden(module)}): its "declaration" does not match its "declarationDigest"`;
  // Pinning never writes one (the declaration was checked), and a reviewer's diff would not show it.
  const hidden = findHiddenInDeclaration(declaration);
  if (hidden !== undefined) return `(${showHidden(module)}): its declaration's ${hidden.reason}`;
  const entry: LockEntry = {
    package: name as string | null,
    module,
    tool,
    declaration: declaration as unknown as ToolInfo,
    declarationDigest,
    content,
    ...(files === undefined ? {} : { files: files as Record<string, string> }),
    ...(secrets === undefined ? {} : { secrets: secrets as LockedBindings }),
  };
  if (server === undefined) return entry;
  const problem = serverRunsProblem(server);
  if (problem !== undefined) return `(${showHidden(module)}): ${problem}`;
  // As for the declaration: what is enforced is the digest, what a reviewer reads is the object.
  if (name !== null || serverRunsDigest(server as ServerRuns) !== content)
    return `(${showHidden(module)}): its "server" does not match its "content" (or it names a package)`;
  entry.server = server as ServerRuns;
  return entry;
}

function isDigest(value: unknown): boolean {
  return typeof value === 'string' && DIGEST.test(value);
}

/** The lock file's text: sorted keys, entries sorted by package and module, two-space indents. */
export function renderLock(entries: readonly LockEntry[]): string {
  const tools = [...entries].sort((a, b) => compare(entryKey(a), entryKey(b)));
  return `${JSON.stringify(sortedCopy({ format: LOCK_FORMAT, tools }), null, 2)}\n`;
}

/** Writes the lock whole or not at all: a reader never sees half a file. */
export function writeLockFile(file: string, entries: readonly LockEntry[]): void {
  const partial = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(partial, renderLock(entries), { flag: 'wx' });
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw lockError(file, `it could not be written: ${(error as Error).message}`);
  }
}

function lockError(file: string, problem: string): ToolHostError {
  return new ToolHostError('INVALID_OPTION', `The lock file ${file} can't be used: ${problem}`);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
