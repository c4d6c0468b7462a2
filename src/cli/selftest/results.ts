/**
 * The rows of a selftest run: one per offered tool (passed, failed, no selftest) and one per module
 * left out, in load order; writes outside tmpDirs traced back to the selftest that ran when the file
 * changed; and the run's verdict.
 */
import { basename, sep } from 'node:path';
import type { SelftestReport } from '../../host/events.js';
import type { ModuleStatus } from '../../registry/registry.js';
import { pathInPackage } from '../ui/package-paths.js';
import type { DetectedWrite } from './write-watch.js';

export type SelftestResult = 'passed' | 'failed' | 'no-selftest' | 'left-out';

export interface SelftestRow {
  /** The tool's name; `null` for a module left out before it named itself. */
  tool: string | null;
  /** The package's name (or folder name), or the module file's name. */
  package: string;
  /** The package folder or module file it was loaded from. */
  source: string;
  /** The module file. */
  module: string;
  status: SelftestResult;
  durationMs: number | null;
  /** Why it failed; `stack`: where (the tool's own frames, relative to its package). */
  error?: { code: string; message: string; stack?: string };
}

export interface WriteFinding extends DetectedWrite {
  /** The selftest that ran when the entry changed, when exactly one did. */
  tool: string | null;
  /** The selftests that ran when it changed, when it can't be pinned on one. */
  suspects: string[];
}

/** The error code of a selftest that wrote outside its tmpDir. */
export const WROTE_OUTSIDE_TMPDIR = 'WROTE_OUTSIDE_TMPDIR';

/** The error code of a tool without a selftest when `--require-selftests` asks for one. */
export const NO_SELFTEST = 'NO_SELFTEST';

export function packageLabel(status: ModuleStatus): string {
  return status.packageName ?? basename(status.source);
}

/** How a row names its tool: the name, or the module's path inside its package (absolute outside it). */
export function rowLabel(row: SelftestRow): string {
  if (row.tool !== null) return row.tool;
  return row.source === row.module ? basename(row.module) : pathInPackage(row.source, row.module);
}

export function leftOutRow(status: ModuleStatus): SelftestRow {
  return {
    tool: status.name ?? null,
    package: packageLabel(status),
    source: status.source,
    module: status.path,
    status: 'left-out',
    durationMs: null,
    error: { code: status.code ?? 'LEFT_OUT', message: status.reason ?? 'left out' },
  };
}

/**
 * A selftest's row. With `requireSelftest`, a tool without one is a failure in its own row, so the
 * table, the counts and the exit code all say the same.
 */
export function reportRow(
  status: ModuleStatus,
  report: SelftestReport,
  options: { requireSelftest: boolean },
): SelftestRow {
  if (report.status === 'no-selftest' && options.requireSelftest) {
    return {
      tool: report.name,
      package: packageLabel(status),
      source: status.source,
      module: status.path,
      status: 'failed',
      durationMs: null,
      error: { code: NO_SELFTEST, message: 'the tool has no selftest, and --require-selftests asks for one' },
    };
  }
  const row: SelftestRow = {
    tool: report.name,
    package: packageLabel(status),
    source: status.source,
    module: status.path,
    status: report.status,
    durationMs: report.status === 'no-selftest' ? null : report.durationMs,
  };
  if (report.error !== undefined) {
    const { code, message, stack } = report.error;
    row.error = stack === undefined ? { code, message } : { code, message, stack };
  }
  return row;
}

export interface RunWindow {
  /** The selftest's tool, or `null` for the reading of declarations before any selftest ran. */
  tool: string | null;
  startedAt: number;
  endedAt: number;
}

/**
 * How far a file time may stray from the `Date.now()` window of the write: the kernel stamps files
 * from a coarse clock that trails by up to a tick (10 ms at HZ=100), and `Date.now()` drops the
 * fraction of a millisecond that a file time keeps. A write is held by every window within this
 * margin; one held by several is pinned by running those selftests again (see {@link Rerun}).
 */
const CLOCK_MARGIN_MS = 10;

/** What a selftest changed when it ran again on its own, between two snapshots. */
export interface Rerun {
  tool: string;
  changed: readonly DetectedWrite[];
}

/**
 * Pins each write on a selftest: on the first one that, run again on its own, changed the same path
 * (or a path inside it, or around it); else on the one running when the entry changed, when exactly
 * one was.
 */
export function attributeWrites(
  writes: readonly DetectedWrite[],
  windows: readonly RunWindow[],
  reruns: readonly Rerun[] = [],
): WriteFinding[] {
  const related = (a: string, b: string) =>
    a === b || a.startsWith(`${b}${sep}`) || b.startsWith(`${a}${sep}`);
  return writes.map((write) => {
    const again = reruns.find((rerun) => rerun.changed.some((change) => related(change.path, write.path)));
    if (again !== undefined) return { ...write, tool: again.tool, suspects: [] };
    const at = write.mtimeMs;
    if (at === undefined) return { ...write, tool: null, suspects: [] };
    const holding = windows.filter(
      (window) => window.startedAt - CLOCK_MARGIN_MS <= at && at <= window.endedAt + CLOCK_MARGIN_MS,
    );
    const tools = holding.map((window) => window.tool).filter((tool): tool is string => tool !== null);
    if (holding.length === 1 && tools.length === 1) return { ...write, tool: tools[0] ?? null, suspects: [] };
    return { ...write, tool: null, suspects: tools };
  });
}

/** Fails the row of every selftest that wrote outside its tmpDir, naming what it wrote. */
export function applyWrites(rows: SelftestRow[], findings: readonly WriteFinding[]): void {
  for (const row of rows) {
    const own = findings.filter((finding) => finding.tool !== null && finding.tool === row.tool);
    if (own.length === 0) continue;
    const writes = own.map(describeWrite).join('; ');
    row.error =
      row.status === 'failed' && row.error !== undefined
        ? {
            code: row.error.code,
            message: `${row.error.message}; it also wrote outside its tmpDir: ${writes}`,
          }
        : { code: WROTE_OUTSIDE_TMPDIR, message: writes };
    row.status = 'failed';
  }
}

const PLACES: Record<DetectedWrite['place'], string> = {
  package: 'in its package',
  'working-directory': 'in the working directory',
  'data-dir': 'in the dataDir',
  'launch-directory': 'in the directory toolhost was started in',
};

/** "created ./cache/ in the working directory" */
export function describeWrite(write: DetectedWrite): string {
  const shown =
    write.place === 'package' || write.place === 'launch-directory'
      ? write.path
      : `./${write.relativePath}${write.kind === 'dir' ? '/' : ''}`;
  return `${write.change} ${shown} ${PLACES[write.place]}`;
}

export interface SelftestCounts {
  passed: number;
  failed: number;
  noSelftest: number;
  leftOut: number;
}

export function countRows(rows: readonly SelftestRow[]): SelftestCounts {
  const count = (status: SelftestResult) => rows.filter((row) => row.status === status).length;
  return {
    passed: count('passed'),
    failed: count('failed'),
    noSelftest: count('no-selftest'),
    leftOut: count('left-out'),
  };
}
