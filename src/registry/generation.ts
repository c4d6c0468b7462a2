/**
 * What the registry holds and what it publishes. A {@link Generation} is one whole, immutable set of
 * offered tools and module states, built from the host's own tools and the current version of every
 * loaded source, in load order.
 */

import type { LeftOutCode } from '../boundary/errors.js';
import type { JsonSchema, ToolAnnotations, ToolContext } from '../boundary/tool-contract.js';
import type { IsolationTier } from '../calls/isolation.js';
import type { CallPool } from '../calls/worker-pool.js';
import type { ToolInfo } from '../declaration/check.js';
import type { LockDifference } from '../lock/difference.js';
import type { PinVerdict } from '../lock/pins.js';
import type { ServerRuns } from '../lock/server-runs.js';
import type { InputValidator } from '../schema/json-schema.js';
import type { Snapshot } from '../snapshot/layout.js';
import type { PackagePermissions } from '../sources/resolve-path.js';
import type { RereadSchedule } from './reread-schedule.js';

/** A trusted, in-process tool the host registers itself. */
export interface HostTool {
  name: string;
  description: string;
  /** A literal schema (`as const`, or from `defineTool`) is accepted as it is. */
  parameterSchema: ToolInfo['parameterSchema'] | JsonSchema;
  run(args: Record<string, unknown>, ctx: ToolContext): unknown;
  selftest?(ctx: ToolContext): unknown;
  /** @default 30000 */
  timeoutMs?: number;
  /** @default 'parallel' */
  concurrency?: ToolInfo['concurrency'];
  /** A title for people; checked as a module's is. */
  title?: string;
  /** Behaviour hints, passed on to MCP clients as the tool's claims. */
  annotations?: ToolAnnotations;
  /** A JSON Schema (root `type: "object"`) that the tool's structured results are checked against. */
  outputSchema?: JsonSchema;
}

/** How a module's declaration read ended. */
export type ModuleRead =
  | {
      kind: 'read';
      info: ToolInfo;
      validate: InputValidator;
      validateOutput?: InputValidator | undefined;
      hasSelftest: boolean;
    }
  | { kind: 'failed'; code: LeftOutCode; reason: string }
  | { kind: 'timed-out'; reason: string; schedule: RereadView | undefined };

/**
 * What a generation reads of a re-read schedule: when it runs next. The registry makes one for each
 * module read that ran over its bound; an MCP server keeps its own (src/mcp/servers), which outlives
 * a version, so cancelling its view does nothing.
 */
export type RereadView = Pick<RereadSchedule, 'nextAt' | 'cancel'>;

/**
 * One version of a loaded source (a package, or a module file on its own): the snapshot its modules
 * were read from and run from, and how each read ended. A new version replaces the whole of the old
 * one in one publish; it is never edited, except that a re-read of one of its modules fills in
 * that module's read.
 */
export interface SourceVersion {
  /** The real path of the package folder or module file (or MCP client config): the trust domain. */
  readonly root: string;
  /** `servers`: an MCP client config, whose modules are its servers' tools (src/mcp/servers). */
  readonly kind: 'package' | 'module' | 'servers';
  readonly packageName: string | undefined;
  /** What its manifest asks for (`toolhost.permissions`); the host grants it or not. */
  readonly permissions: PackagePermissions;
  readonly isolation: IsolationTier;
  /** Undefined when nothing could be read (the host closed first, the package can't be confined). */
  readonly snapshot: Snapshot | undefined;
  readonly modules: readonly ModuleRecord[];
  /**
   * An MCP client config's running servers: where its tools' calls go. They outlive a version (a
   * `list_changed` publishes a new version of the same servers) and end once no current version
   * holds them.
   */
  readonly servers?: ServerPool;
}

/** An MCP client config's running servers, as calls, the registry and the lock see them. */
export interface ServerPool extends CallPool {
  /** What the server of a tool (by its record's `url`) runs, as a lock pins it, when digested. */
  runsOf(url: string): ServerRuns | undefined;
  /** Digests what each running server runs, where its start did not (pinning with no lock in force). */
  prepareRuns(): Promise<void>;
}

export interface ModuleRecord {
  /** The module file's real path in the package (not in the snapshot). */
  readonly path: string;
  readonly source: SourceVersion;
  /** Load order: between loaded tools with one name, the first loaded wins. */
  readonly order: number;
  /** What a worker imports: the module in its snapshot (empty when there is none). */
  readonly url: string;
  read: ModuleRead;
}

export interface OfferedTool {
  info: ToolInfo;
  validate: InputValidator;
  /** The compiled `outputSchema` that its structured results are checked against, when it has one. */
  validateOutput?: InputValidator | undefined;
  hasSelftest: boolean;
  origin: { kind: 'host'; tool: HostTool } | { kind: 'module'; record: ModuleRecord };
}

/**
 * Where a known module stands: offered to the model, left out (its `code` and `reason` say why),
 * or left out until a re-read (its read ran over its time bound; `nextRereadAt` says when). The
 * `state` of a {@link ModuleStatus}, and the `type` of a `module` event besides `removed`.
 */
export type ModuleState = 'offered' | 'left-out' | 'reread-pending';

/** One known module as `host.status()` shows it. */
export interface ModuleStatus {
  /** The module file. */
  path: string;
  /** The package folder (or module file) it was loaded from. */
  source: string;
  packageName?: string;
  /** The tool's name, when its declaration named one. */
  name?: string;
  /**
   * The version it was read from and runs: a hash of its package's files (own files by content,
   * node_modules by identity). Any change in the package is a new version of all its modules.
   */
  version?: string;
  /**
   * The isolation tier its package got: the one `load` or the host's `isolation` named, else the
   * strongest this machine has (absent for a path that could not be loaded at all).
   */
  isolation?: IsolationTier;
  /** A module under its first read is not shown: it is known once it has been read. */
  state: ModuleState;
  code?: LeftOutCode;
  reason?: string;
  /**
   * Under a lock, for `DECLARATION_CHANGED` and `CODE_CHANGED`: each changed field (`content` for
   * the package's content) with its pinned value (`before`) and the value read now (`after`).
   */
  difference?: LockDifference[];
  /** When the next re-read runs (epoch ms of the host's clock), for `reread-pending`. */
  nextRereadAt?: number;
  /**
   * Its package's connections through its egress proxy so far, allowed and refused, and the times
   * its network was cut for moving more than `maxNetworkBytesPerCall` (the process tier in
   * bubblewrap, for a package held to a list of hosts; absent before the first).
   */
  network?: { allowed: number; refused: number; overBudget: number };
}

export interface Generation {
  /** Increases with every publish. */
  readonly number: number;
  readonly tools: ReadonlyMap<string, OfferedTool>;
  readonly statuses: readonly ModuleStatus[];
}

/** A package or module path a source yielded but that could not be loaded at all. */
export interface SourceProblem {
  path: string;
  reason: string;
}

export const EMPTY_GENERATION: Generation = { number: 0, tools: new Map(), statuses: [] };

/** Under a lock: why a module that was read may not be offered, or undefined when it may. */
export type PinCheck = (record: ModuleRecord, info: ToolInfo) => PinVerdict | undefined;

/** The generation of these parts: a pure function, so a generation is exactly what it was built of. */
export function buildGeneration(
  number: number,
  hostTools: ReadonlyMap<string, OfferedTool>,
  sources: Iterable<SourceVersion>,
  problems: Iterable<SourceProblem> = [],
  pinCheck?: PinCheck,
): Generation {
  const tools = new Map(hostTools);
  const statuses: ModuleStatus[] = [];
  const records = [...sources].flatMap((source) => source.modules).sort((a, b) => a.order - b.order);
  for (const record of records) statuses.push(moduleStatus(record, tools, pinCheck));
  for (const problem of problems) {
    statuses.push({
      path: problem.path,
      source: problem.path,
      state: 'left-out',
      code: 'SOURCE_UNREADABLE',
      reason: problem.reason,
    });
  }
  return { number, tools, statuses };
}

/** One module's status in load order; a module read, matched and not yet named takes its name in `tools`. */
function moduleStatus(
  record: ModuleRecord,
  tools: Map<string, OfferedTool>,
  pinCheck?: PinCheck,
): ModuleStatus {
  const status: ModuleStatus = {
    path: record.path,
    source: record.source.root,
    isolation: record.source.isolation,
    state: 'left-out',
  };
  const { snapshot, packageName } = record.source;
  if (snapshot !== undefined) status.version = snapshot.id;
  if (packageName !== undefined) status.packageName = packageName;
  const { read } = record;
  const withheld = read.kind === 'read' ? pinCheck?.(record, read.info) : undefined;
  if (read.kind === 'read' && withheld !== undefined) {
    // Withheld before it could take a name: what the lock doesn't match never shadows anything.
    status.name = read.info.name;
    status.code = withheld.code;
    status.reason = withheld.reason;
    if (withheld.difference.length > 0) status.difference = structuredClone(withheld.difference);
  } else if (read.kind === 'read') {
    offerUnlessTaken(status, record, read, tools);
  } else if (read.kind === 'failed') {
    status.code = read.code;
    status.reason = read.reason;
  } else {
    status.code = 'DECLARATION_TIMEOUT';
    status.reason = read.reason;
    if (read.schedule !== undefined) {
      status.state = 'reread-pending';
      const nextAt = read.schedule.nextAt;
      if (nextAt !== undefined) status.nextRereadAt = nextAt;
    }
  }
  return status;
}

/** Offers a read module under its name, or leaves it out when a tool before it holds the name. */
function offerUnlessTaken(
  status: ModuleStatus,
  record: ModuleRecord,
  read: ModuleRead & { kind: 'read' },
  tools: Map<string, OfferedTool>,
): void {
  status.name = read.info.name;
  const holder = tools.get(read.info.name);
  if (holder === undefined) {
    tools.set(read.info.name, {
      info: read.info,
      validate: read.validate,
      validateOutput: read.validateOutput,
      hasSelftest: read.hasSelftest,
      origin: { kind: 'module', record },
    });
    status.state = 'offered';
  } else {
    status.code = 'NAME_TAKEN';
    status.reason = clashReason(read.info.name, holder, record);
  }
}

function clashReason(name: string, holder: OfferedTool, record: ModuleRecord): string {
  if (holder.origin.kind === 'host') return `the host's own tool "${name}" has this name`;
  const other = holder.origin.record;
  if (other.path === record.path) {
    return `this module is already loaded on its own (${other.source.root}); unload that to serve it from this package`;
  }
  return `the name "${name}" is already offered by ${other.path}`;
}
