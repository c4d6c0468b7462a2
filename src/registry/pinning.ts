/**
 * The registry as the lock sees it: the check each module read is held to under a lock, and the
 * modules that pinning records.
 */
import type { PinnableModule, UnpinnableModule } from '../lock/pin.js';
import type { Pins } from '../lock/pins.js';
import { lockedBindings } from '../lock/secret-bindings.js';
import { MAX_SERVER_FILES, serverRunsDigest } from '../lock/server-runs.js';
import type { ModuleRecord, ModuleStatus, PinCheck, SourceVersion } from './generation.js';

/** Why a server's tool can't be pinned when what its server runs could not be digested. */
const UNDIGESTED_SERVER = `what its MCP server runs could not be digested (its package's files could not all be read, or number more than ${MAX_SERVER_FILES})`;
const UNDIGESTED_SERVER_FIX = "check that the server's package files can be read";

/** The check a generation holds every module read to under `pins`; none without a lock. */
export function pinCheckOf(pins: Pins | undefined): PinCheck | undefined {
  if (pins === undefined) return undefined;
  return (record, info) => {
    const unpinnable = unpinnableReason(record.source);
    if (unpinnable !== undefined) return { code: 'NOT_PINNED', reason: unpinnable, difference: [] };
    const identity = {
      kind: record.source.kind,
      packageName: record.source.packageName,
      root: record.source.root,
      path: record.path,
    };
    if (record.source.kind !== 'servers')
      return pins.verdict(
        identity,
        info,
        record.source.snapshot?.digest,
        record.source.snapshot?.files,
        lockedBindings(record.source.permissions.secrets),
      );
    // A server's tool is pinned with what its server runs: never offered without knowing that.
    const runs = record.source.servers?.runsOf(record.url);
    if (runs === undefined) {
      return {
        code: 'NOT_PINNED',
        reason: `${UNDIGESTED_SERVER}, so the lock in ${pins.file} can't vouch for it: ${UNDIGESTED_SERVER_FIX}`,
        difference: [],
      };
    }
    return pins.verdict(identity, info, serverRunsDigest(runs), undefined, undefined, runs);
  };
}

/**
 * Why a version can't be pinned, if it can't: its snapshot keeps a link to code outside the
 * package, which its content digest doesn't cover, so that code could change under the lock unseen.
 */
export function unpinnableReason(version: Pick<SourceVersion, 'snapshot' | 'kind'>): string | undefined {
  const out = version.snapshot?.linkOut;
  if (out === undefined) return undefined;
  return `it can't be pinned: ${out.link} is a symbolic link to ${out.target}, outside the package, and a lock pins only what the package holds (what the link leads to could change under the lock unseen); install that code into the package instead of linking it (npm install, not npm link), then pin it`;
}

/**
 * The modules whose declarations were read and checked and that are offered, or withheld only by
 * the lock: what pinning records. A module left out for a clash of names is not among them.
 */
export function pinnableModules(
  versions: Iterable<SourceVersion>,
  statuses: readonly ModuleStatus[],
): { pinnable: PinnableModule[]; unpinnable: UnpinnableModule[] } {
  const found: PinnableModule[] = [];
  const unpinnable: UnpinnableModule[] = [];
  for (const version of versions) {
    if (version.kind === 'servers') {
      pinnableServerTools(version, statuses, found, unpinnable);
      continue;
    }
    const content = version.snapshot?.digest;
    const reason = unpinnableReason(version);
    // What can't be pinned is named as such (a report's notPinned); what has no content isn't read.
    if (content === undefined && reason === undefined) continue;
    for (const record of version.modules) {
      if (record.read.kind !== 'read') continue;
      if (!pinnableStatus(version, record, statuses)) continue;
      const identity = {
        kind: version.kind,
        packageName: version.packageName,
        root: version.root,
        path: record.path,
      };
      if (reason !== undefined || content === undefined) {
        unpinnable.push({
          ...identity,
          tool: record.read.info.name,
          reason: reason ?? 'it has no content to pin',
        });
        continue;
      }
      found.push({
        kind: version.kind,
        packageName: version.packageName,
        root: version.root,
        path: record.path,
        info: record.read.info,
        content,
        files: version.snapshot?.files,
        secrets: lockedBindings(version.permissions.secrets),
      });
    }
  }
  const byPath = (a: { path: string }, b: { path: string }) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
  return { pinnable: found.sort(byPath), unpinnable: unpinnable.sort(byPath) };
}

/** Whether a module read is offered, or withheld only by the lock: what pinning records. */
function pinnableStatus(
  version: SourceVersion,
  record: ModuleRecord,
  statuses: readonly ModuleStatus[],
): boolean {
  const status = statuses.find(
    (candidate) => candidate.source === version.root && candidate.path === record.path,
  );
  const withheldByLock =
    status?.code === 'NOT_PINNED' ||
    status?.code === 'DECLARATION_CHANGED' ||
    status?.code === 'CODE_CHANGED';
  return status?.state === 'offered' || withheldByLock;
}

/** An MCP config's tools, each pinned with what its server runs (see {@link ServerPool.prepareRuns}). */
function pinnableServerTools(
  version: SourceVersion,
  statuses: readonly ModuleStatus[],
  found: PinnableModule[],
  unpinnable: UnpinnableModule[],
): void {
  for (const record of version.modules) {
    if (record.read.kind !== 'read' || !pinnableStatus(version, record, statuses)) continue;
    const identity = { kind: version.kind, packageName: undefined, root: version.root, path: record.path };
    const runs = version.servers?.runsOf(record.url);
    if (runs === undefined) {
      unpinnable.push({
        ...identity,
        tool: record.read.info.name,
        reason: `${UNDIGESTED_SERVER}: ${UNDIGESTED_SERVER_FIX}`,
      });
      continue;
    }
    found.push({ ...identity, info: record.read.info, content: serverRunsDigest(runs), server: runs });
  }
}
