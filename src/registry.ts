/**
 * Generations of offered tools. Every change (a load, a re-read, a register) builds a new immutable
 * {@link Generation} from the host's own tools and the known modules, in load order, so a reader
 * sees one whole set, never a mix of two.
 */
import type { ToolInfo } from './declaration.js';
import type { LeftOutCode } from './errors.js';
import type { InputValidator } from './json-schema.js';
import type { RereadSchedule } from './reread-schedule.js';
import type { ToolContext } from './tool-module.js';

/** A trusted, in-process tool the host registers itself (the seed's `Jibu.Tools` style). */
export interface HostTool {
  name: string;
  description: string;
  parameterSchema: ToolInfo['parameterSchema'];
  run(args: Record<string, unknown>, ctx: ToolContext): unknown;
  selftest?(ctx: ToolContext): unknown;
  /** @default 30000 */
  timeoutMs?: number;
  /** @default 'parallel' */
  concurrency?: ToolInfo['concurrency'];
}

/** Where a module's declaration read stands. */
export type ModuleRead =
  | { kind: 'reading' }
  | { kind: 'read'; info: ToolInfo; validate: InputValidator; hasSelftest: boolean }
  | { kind: 'failed'; code: LeftOutCode; reason: string }
  | { kind: 'timed-out'; reason: string; schedule: RereadSchedule | undefined };

export interface ModuleRecord {
  /** The module file's real path. */
  path: string;
  /** The package folder (or the module file) it was loaded from: its trust domain. */
  domain: string;
  packageName: string | undefined;
  /** Load order: between loaded tools with one name, the first loaded wins. */
  order: number;
  version: string;
  url: string;
  read: ModuleRead;
}

export interface OfferedTool {
  info: ToolInfo;
  validate: InputValidator;
  hasSelftest: boolean;
  origin: { kind: 'host'; tool: HostTool } | { kind: 'module'; record: ModuleRecord };
}

/** One known module as `host.status()` shows it. */
export interface ModuleStatus {
  /** The module file. */
  path: string;
  /** The package folder (or module file) it was loaded from. */
  source: string;
  packageName?: string;
  /** The tool's name, when its declaration named one. */
  name?: string;
  /** The module file's version (a hash of its content); a changed file is a new version. */
  version?: string;
  state: 'offered' | 'left-out' | 'reread-pending' | 'reading';
  code?: LeftOutCode;
  reason?: string;
  /** When the next re-read runs (epoch ms of the host's clock), for `reread-pending`. */
  nextRereadAt?: number;
}

export interface Generation {
  /** Increases with every change of the offered set or of a module's state. */
  readonly number: number;
  readonly tools: ReadonlyMap<string, OfferedTool>;
  readonly statuses: readonly ModuleStatus[];
  /** Per trust domain, the versions of its modules: a domain whose modules changed gets new workers. */
  readonly domainVersions: ReadonlyMap<string, string>;
}

/** A package or module path a source yielded but that could not be loaded at all. */
export interface SourceProblem {
  path: string;
  reason: string;
}

export function buildGeneration(
  number: number,
  hostTools: ReadonlyMap<string, OfferedTool>,
  records: Iterable<ModuleRecord>,
  problems: Iterable<SourceProblem> = [],
): Generation {
  const tools = new Map(hostTools);
  const statuses: ModuleStatus[] = [];
  const ordered = [...records].sort((a, b) => a.order - b.order);
  for (const record of ordered) {
    const status: ModuleStatus = { path: record.path, source: record.domain, state: 'reading' };
    if (record.version !== 'missing') status.version = record.version;
    if (record.packageName !== undefined) status.packageName = record.packageName;
    const { read } = record;
    if (read.kind === 'read') {
      status.name = read.info.name;
      const holder = tools.get(read.info.name);
      if (holder === undefined) {
        tools.set(read.info.name, {
          info: read.info,
          validate: read.validate,
          hasSelftest: read.hasSelftest,
          origin: { kind: 'module', record },
        });
        status.state = 'offered';
      } else {
        status.state = 'left-out';
        status.code = 'NAME_TAKEN';
        status.reason =
          holder.origin.kind === 'host'
            ? `the host's own tool "${read.info.name}" has this name`
            : `the name "${read.info.name}" is already offered by ${holder.origin.record.path}`;
      }
    } else if (read.kind === 'failed') {
      status.state = 'left-out';
      status.code = read.code;
      status.reason = read.reason;
    } else if (read.kind === 'timed-out') {
      const nextAt = read.schedule?.nextAt;
      status.code = 'DECLARATION_TIMEOUT';
      status.reason = read.reason;
      if (nextAt === undefined && read.schedule === undefined) {
        status.state = 'left-out';
      } else {
        status.state = 'reread-pending';
        if (nextAt !== undefined) status.nextRereadAt = nextAt;
      }
    }
    statuses.push(status);
  }
  for (const problem of problems) {
    statuses.push({
      path: problem.path,
      source: problem.path,
      state: 'left-out',
      code: 'SOURCE_UNREADABLE',
      reason: problem.reason,
    });
  }
  const domainVersions = new Map<string, string>();
  for (const record of ordered) {
    const known = domainVersions.get(record.domain);
    domainVersions.set(record.domain, known === undefined ? record.version : `${known},${record.version}`);
  }
  return { number, tools, statuses, domainVersions };
}
