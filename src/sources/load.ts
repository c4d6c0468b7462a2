/**
 * `host.load` and `host.unload`: a source's next version is read (see {@link readSource}) and then
 * published in one step, unless a newer load of the same source, an unload or `close()` came first.
 */
import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { IsolationTier } from '../calls/isolation.js';
import type { LoadReport } from '../host/events.js';
import { parseServersConfig, readServersConfigJson } from '../mcp/servers/config.js';
import type { ServersLoading } from '../mcp/servers/load-servers.js';
import { buildGeneration, type SourceVersion } from '../registry/generation.js';
import type { Registry } from '../registry/registry.js';
import type { Snapshots } from '../snapshot/snapshot.js';
import { readSource, type SourceReaderParts } from './read-version.js';
import { NO_PERMISSIONS, resolveSource } from './resolve-path.js';

export interface LoadingParts extends SourceReaderParts, Omit<ServersLoading, 'registry'> {
  registry: Registry;
  /** What this host grants a package of the network, as a report says it (see {@link LoadReport.network}). */
  networkOf(manifest: Pick<LoadReport, 'packageName' | 'permissions'>): LoadReport['network'];
}

export async function loadSource(
  parts: LoadingParts,
  path: string,
  isolation: IsolationTier,
): Promise<LoadReport> {
  const { registry } = parts;
  // Pinned since the last load? Judged before this load's version, so its result is told against the new pins.
  registry.refreshPins();
  const config = await readServersConfigJson(resolve(path));
  if (config !== undefined) return loadConfig(parts, path, config);
  const source = await resolveSource(path);
  if (source.kind === 'module' && registry.source(source.root) === undefined) {
    const serving = registry.packageServing(source.root);
    // Its package serves it already: a second copy would only clash with itself.
    if (serving !== undefined) {
      return { ...reportOf(parts, source.root, 'module', source.root), servedBy: serving.root };
    }
  }
  registry.rememberRoot(path, source.root);
  const { ticket, orderOf } = registry.beginLoad(
    source.root,
    source.modules.map((module) => module.path),
  );
  const next = await readSource(parts, { source, isolation, current: registry.source(source.root), orderOf });
  if (next === 'unchanged') return reportOf(parts, source.root, source.kind);
  registry.publish({ type: 'source', version: next, ticket });
  if (registry.source(source.root) === next) return reportOf(parts, source.root, source.kind);
  // Not published: a newer load won (its report is the one that counts), or the host closed (this
  // report says what the reads found, though nothing is offered any more).
  letGo(parts.snapshots, next);
  if (!registry.closed) return reportOf(parts, source.root, source.kind);
  const manifest = manifestOf(next);
  return {
    source: source.root,
    kind: source.kind,
    ...manifest,
    network: parts.networkOf(manifest),
    modules: [...buildGeneration(0, new Map(), [next]).statuses],
  };
}

/**
 * An MCP client config: its servers started, read and published (the MCP client and the sandbox
 * code load only now). A file that is not a config at all throws, as a package path does.
 */
async function loadConfig(
  parts: LoadingParts,
  path: string,
  config: Record<string, unknown>,
): Promise<LoadReport> {
  const root = await realpath(resolve(path));
  const configured = await parseServersConfig(config, root);
  parts.registry.rememberRoot(path, root);
  const { loadServers } = await import('../mcp/servers/load-servers.js');
  await loadServers(parts, root, configured);
  return reportOf(parts, root, 'servers');
}

/** @returns whether anything was loaded (or shown as unloadable) from that path */
export function unloadSource(registry: Registry, path: string): boolean {
  const root = registry.rootOf(path, realPathOr);
  let hadProblem = false;
  for (const candidate of new Set([root, resolve(path)])) {
    if (!registry.hasProblem(candidate)) continue;
    hadProblem = true;
    registry.publish({ type: 'problem', path: candidate, reason: undefined });
  }
  const loaded = registry.source(root) !== undefined;
  // Published even when nothing is loaded yet: it also cancels a first load still reading.
  registry.publish({ type: 'unload', root });
  return loaded || hadProblem;
}

/** A version no longer used by anything: its snapshot can go. */
export function letGo(snapshots: Snapshots, version: SourceVersion): void {
  if (version.snapshot !== undefined) snapshots.release(version.snapshot);
}

function reportOf(parts: LoadingParts, root: string, kind: LoadReport['kind'], path?: string): LoadReport {
  const { registry } = parts;
  const modules = registry.generation.statuses.filter(
    (status) => status.source === root || (path !== undefined && status.path === path),
  );
  const loaded = registry.source(root);
  const manifest = loaded === undefined ? { permissions: NO_PERMISSIONS } : manifestOf(loaded);
  return {
    source: root,
    kind,
    ...manifest,
    network: parts.networkOf(manifest),
    modules: modules.map((status) => ({ ...status })),
  };
}

/** What a loaded version's manifest says of the package: its name, and what it asks for. */
function manifestOf(version: SourceVersion): Pick<LoadReport, 'packageName' | 'permissions'> {
  return version.packageName === undefined
    ? { permissions: version.permissions }
    : { packageName: version.packageName, permissions: version.permissions };
}

function realPathOr(absolute: string): string {
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}
