/**
 * Reading a version of a source: take its snapshot, list its modules as the snapshot holds them,
 * and read every module's declaration from the snapshot in a throwaway worker. Nothing here
 * publishes: the caller publishes the finished version in one step, or lets it go.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { relativeTo } from '../boundary/stack-frames.js';
import type { IsolationTier } from '../calls/isolation.js';
import { checkDeclaration } from '../declaration/check.js';
import { fieldLocation, syntaxErrorLocation } from '../declaration/error-location.js';
import type { DeclarationReader, RawRead } from '../declaration/reader.js';
import type { VersionReads } from '../process/process-domains.js';
import type { ModuleRead, ModuleRecord, SourceVersion } from '../registry/generation.js';
import { isWithin } from '../shared/paths.js';
import { type Snapshot, snapshotUrl, toOriginalPaths } from '../snapshot/layout.js';
import { type UnconfinedLink, UnconfinedSnapshotError } from '../snapshot/links.js';
import type { Snapshots } from '../snapshot/snapshot.js';
import { explainImport } from './import-failure.js';
import {
  type ListedModule,
  listPackage,
  NO_PERMISSIONS,
  type PackagePermissions,
  type ResolvedSource,
} from './resolve-path.js';

type VersionFlags = Pick<SourceVersion, 'root' | 'isolation' | 'snapshot' | 'packageName' | 'permissions'>;

export interface SourceReaderParts {
  snapshots: Snapshots;
  reader: DeclarationReader;
  execArgvFor(version: VersionFlags): string[];
  /** Where a version's modules are read when not in the host's own workers (the process tier). */
  readsFor(version: VersionFlags): Promise<VersionReads | undefined>;
  /** Whether a tier confines a package with Node's permission model (strict; process, unsandboxed). */
  confinedByPermissions(isolation: IsolationTier): Promise<boolean>;
  /** Why a version can't be offered for the secrets it binds (see secrets/granted-secrets.ts), if so. */
  secretsRefusal?(version: VersionFlags, where: { confinedByPermissions: boolean }): string | undefined;
}

export interface SourceReadPlan {
  source: ResolvedSource;
  isolation: IsolationTier;
  /** The version published now, if any: a source whose snapshot and tier are unchanged is not read again. */
  current: SourceVersion | undefined;
  orderOf(path: string): number;
}

/** What a read cut short by `close()` says: the module did nothing wrong. */
const CLOSED_REASON = 'the tool host closed before the declaration was read';

export const CLOSED_READ: ModuleRead = { kind: 'failed', code: 'DECLARATION_EXITED', reason: CLOSED_REASON };

/**
 * The next version of a source, or `unchanged`. The version holds one snapshot `take` (handed to
 * whoever publishes it or lets it go); `unchanged` holds none.
 */
export async function readSource(
  parts: SourceReaderParts,
  plan: SourceReadPlan,
): Promise<SourceVersion | 'unchanged'> {
  const { source, isolation } = plan;
  // Node's permission model follows symbolic links: a snapshot it confines a tool to must hold none
  // that leads out of it (see snapshot/links.ts).
  const confine = source.kind === 'package' && (await parts.confinedByPermissions(isolation));
  let snapshot: Snapshot;
  try {
    snapshot = await parts.snapshots.take(source.root, source.kind, confine);
  } catch (error) {
    const read =
      error instanceof UnconfinedSnapshotError
        ? await unconfinedRead(isolation, source.root, error.unconfined)
        : uncopiedRead(error);
    return versionOf(plan, undefined, source.modules, () => read);
  }
  const { current } = plan;
  if (current?.snapshot === snapshot && current.isolation === isolation) {
    parts.snapshots.release(snapshot);
    return 'unchanged';
  }

  let listed: ListedSource;
  try {
    // What the snapshot lists, not what the folder listed a moment ago: the two may differ.
    listed =
      source.kind === 'package'
        ? await listPackage(snapshot.folder, source.root, source.root)
        : { packageName: undefined, permissions: NO_PERMISSIONS, modules: source.modules };
  } catch (error) {
    parts.snapshots.release(snapshot);
    throw withOriginalPaths(snapshot, error);
  }
  const version = versionOf(
    { ...plan, packageName: listed.packageName, permissions: listed.permissions },
    snapshot,
    listed.modules,
  );
  const refusal = parts.secretsRefusal?.(version, { confinedByPermissions: confine });
  if (refusal !== undefined) {
    return versionOf(
      { ...plan, packageName: listed.packageName, permissions: listed.permissions },
      snapshot,
      listed.modules,
      () => ({
        kind: 'failed',
        code: 'SECRETS_REFUSED',
        reason: refusal,
      }),
    );
  }
  const execArgv = parts.execArgvFor(version);
  const reads = await parts.readsFor(version);
  try {
    await Promise.all(
      version.modules.map(async (record) => {
        if (record.url !== '')
          record.read = await readModule(parts.reader, record, execArgv, snapshot, reads?.read);
      }),
    );
  } finally {
    reads?.close();
  }
  return version;
}

/**
 * Every module of a package the permission model confines, whose snapshot holds a link that would
 * let a tool read outside it (see snapshot/links.ts).
 */
async function unconfinedRead(
  isolation: IsolationTier,
  root: string,
  { link, target: pointsTo, why }: UnconfinedLink,
): Promise<ModuleRead> {
  const tier = isolation === 'strict' ? 'strict isolation' : 'process isolation without an OS sandbox';
  // Where it leads as the system finds it (the same place, for a link that does not go on through others).
  const target = await realpath(pointsTo).catch(() => pointsTo);
  let where: string;
  if (why === 'above')
    where = `above it, and not a file its snapshot holds: a path that goes down through it and back up with '..' leads outside the package (Node's permission model reads the '..' before the system follows the link)`;
  else if (isWithin(root, target))
    where = `outside node_modules, which its tools read only a copy of (Node's permission model follows symbolic links)`;
  else where = `outside the package (Node's permission model follows symbolic links)`;
  return {
    kind: 'failed',
    code: 'MODULE_OUTSIDE_PACKAGE',
    reason: `${tier} can't confine this package: ${link} is a symbolic link to ${target}, ${where}`,
  };
}

/** Every module of a package whose snapshot could not be taken: closed, or the copy failed. */
function uncopiedRead(error: unknown): ModuleRead {
  return (error as Error).name === 'AbortError'
    ? CLOSED_READ
    : {
        kind: 'failed',
        code: 'IMPORT_FAILED',
        reason: `the package could not be copied to be read: ${(error as Error).message}`,
      };
}

/** What a snapshot lists: the package's name and permissions, and its modules. */
interface ListedSource {
  packageName: string | undefined;
  permissions: PackagePermissions;
  modules: ListedModule[];
}

/** Reads one module of a version again (a re-read after a read that ran over its time bound). */
export async function rereadModule(parts: SourceReaderParts, record: ModuleRecord): Promise<ModuleRead> {
  const { source } = record;
  if (source.snapshot === undefined) return CLOSED_READ;
  const reads = await parts.readsFor(source);
  try {
    return await readModule(parts.reader, record, parts.execArgvFor(source), source.snapshot, reads?.read);
  } finally {
    reads?.close();
  }
}

/**
 * Reads one module of a snapshot, in a worker of the host or `via` a process of its own, unless an
 * earlier run read the same module of the same content in the same tier (the store keeps it).
 */
export async function readModule(
  reader: DeclarationReader,
  record: Pick<ModuleRecord, 'url' | 'path' | 'source'>,
  execArgv: string[],
  snapshot: Snapshot,
  via?: RawRead,
): Promise<ModuleRead> {
  const { url } = record;
  const module = snapshot.kind === 'module' ? basename(record.path) : relative(snapshot.root, record.path);
  // A module read where addons may load (one that opens its database at its top level) is not the
  // same read where they may not: the tier's key says which.
  const addons = execArgv.includes('--no-addons') ? '' : '+addons';
  const tier = `${record.source.isolation}${addons}`;
  // What a link out of the package leads to is not in the digest: such a package is read afresh.
  const key =
    snapshot.linkOut === undefined
      ? { tier, content: snapshot.digest, module, folder: snapshot.grant }
      : undefined;
  const outcome = await reader.read(url, execArgv, via, key);
  if (outcome.state === 'timed-out')
    return { kind: 'timed-out', reason: outcome.reason, schedule: undefined };
  if (outcome.state === 'failed') {
    const reason = await locatedReason(snapshot, url, outcome);
    return {
      kind: 'failed',
      code: outcome.code,
      reason: await explainImport(snapshot, outcome.code, reason),
    };
  }
  const checked = checkDeclaration(outcome.declaration, reader.schemaLimits);
  return checked.ok
    ? {
        kind: 'read',
        info: checked.info,
        validate: checked.validate,
        validateOutput: checked.validateOutput,
        hasSelftest: checked.hasSelftest,
      }
    : { kind: 'failed', code: checked.code, reason: await locatedReason(snapshot, url, checked) };
}

/**
 * A reason that starts with where it happened, as its author reads it (`tools/x.js:3:11: …`, a path
 * relative to the package): where it was thrown, where Node's parser finds the syntax error, where
 * the field at fault is defined, or at least the module's file.
 */
async function locatedReason(
  snapshot: Snapshot,
  url: string,
  failure: { reason: string; location?: string; syntaxError?: boolean; field?: string },
): Promise<string> {
  // Closing the host cut the read short: nothing happened anywhere in the module.
  if (failure.reason === CLOSED_REASON) return failure.reason;
  const file = fileURLToPath(url);
  let at = failure.location;
  if (at === undefined) {
    const found = failure.syntaxError
      ? await syntaxErrorLocation(file)
      : failure.field !== undefined
        ? await fieldLocation(file, failure.field)
        : undefined;
    at = found === undefined ? file : `${file}:${found.line}:${found.column}`;
  }
  // The location as its author reads it; the reason keeps the real paths it names (where an import
  // was looked for).
  const base = snapshot.kind === 'module' ? dirname(snapshot.root) : snapshot.root;
  return `${relativeTo(toOriginalPaths(snapshot, at), base)}: ${toOriginalPaths(snapshot, failure.reason)}`;
}

function versionOf(
  plan: SourceReadPlan & { packageName?: string | undefined; permissions?: PackagePermissions },
  snapshot: Snapshot | undefined,
  listed: readonly ListedModule[],
  readOf?: () => ModuleRead,
): SourceVersion {
  const { source } = plan;
  const modules: ModuleRecord[] = [];
  const version: SourceVersion = {
    root: source.root,
    kind: source.kind,
    packageName: 'packageName' in plan ? plan.packageName : source.packageName,
    // What the snapshot's manifest asks for (what the version's workers are granted is the host's call).
    permissions: plan.permissions ?? source.permissions,
    isolation: plan.isolation,
    snapshot,
    modules,
  };
  for (const module of listed) {
    const runnable = module.ok && snapshot !== undefined && readOf === undefined;
    modules.push({
      path: module.path,
      source: version,
      order: plan.orderOf(module.path),
      url: runnable ? snapshotUrl(snapshot, module.path) : '',
      read: module.ok
        ? (readOf?.() ?? CLOSED_READ)
        : { kind: 'failed', code: module.code, reason: module.reason },
    });
  }
  return version;
}

function withOriginalPaths(snapshot: Snapshot, error: unknown): unknown {
  if (error instanceof Error) error.message = toOriginalPaths(snapshot, error.message);
  return error;
}
