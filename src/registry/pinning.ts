/**
 * The registry as the lock sees it: the check each module read is held to under a lock, and the
 * modules that pinning records.
 */
import type { PinnableModule } from '../lock/pin.js';
import type { Pins } from '../lock/pins.js';
import type { ModuleStatus, PinCheck, SourceVersion } from './generation.js';

/** The check a generation holds every module read to under `pins`; none without a lock. */
export function pinCheckOf(pins: Pins | undefined): PinCheck | undefined {
  if (pins === undefined) return undefined;
  return (record, info) =>
    pins.verdict(
      {
        kind: record.source.kind,
        packageName: record.source.packageName,
        root: record.source.root,
        path: record.path,
      },
      info,
      record.source.snapshot?.digest,
    );
}

/**
 * The modules whose declarations were read and checked and that are offered, or withheld only by
 * the lock: what pinning records. A module left out for a clash of names is not among them.
 */
export function pinnableModules(
  versions: Iterable<SourceVersion>,
  statuses: readonly ModuleStatus[],
): PinnableModule[] {
  const found: PinnableModule[] = [];
  for (const version of versions) {
    const content = version.snapshot?.digest;
    if (content === undefined) continue;
    for (const record of version.modules) {
      if (record.read.kind !== 'read') continue;
      const status = statuses.find(
        (candidate) => candidate.source === version.root && candidate.path === record.path,
      );
      const withheldByLock =
        status?.code === 'NOT_PINNED' ||
        status?.code === 'DECLARATION_CHANGED' ||
        status?.code === 'CODE_CHANGED';
      if (status?.state !== 'offered' && !withheldByLock) continue;
      found.push({
        kind: version.kind,
        packageName: version.packageName,
        root: version.root,
        path: record.path,
        info: record.read.info,
        content,
      });
    }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
