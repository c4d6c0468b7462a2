/**
 * The rows of a selftest run: one per offered tool (passed, failed, no selftest) and one per module
 * left out, in load order; writes outside tmpDirs and processes left running, each pinned on the
 * selftest that does it again when it runs on its own; and the run's verdict.
 */
import { basename, sep } from 'node:path';
import type { SelftestReport } from '../../host/events.js';
import type { ModuleStatus } from '../../registry/generation.js';
import { pathInPackage } from '../ui/package-paths.js';
import type { LeftoverProcess } from './leftover-processes.js';
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
  /** The selftest that, run again on its own, made the same change, when exactly one did. */
  tool: string | null;
  /** When several did, each of them (each fails); empty when none did. */
  suspects: string[];
}

/** The error code of a selftest that wrote outside its tmpDir. */
export const WROTE_OUTSIDE_TMPDIR = 'WROTE_OUTSIDE_TMPDIR';

/** The error code of a selftest that left processes running after it answered. */
export const LEFT_PROCESSES = 'LEFT_PROCESSES';

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

/** What a selftest did when it ran again on its own, in a host of its own (see `reruns.ts`). */
export interface Rerun {
  tool: string;
  /** What changed in the watched folders between the host's load and its close. */
  changed: readonly DetectedWrite[];
  /** The processes still running once its selftest had answered (ended then). */
  processesLeft: readonly LeftoverProcess[];
}

/**
 * Pins each write on the selftests that, run again on their own, changed the same path (or a path
 * inside it, or around it). Never on a file's times: a tool sets those (`utimes`), so a time can
 * name whichever selftest the writer likes. A write no selftest makes again on its own is pinned on
 * none: it still fails the run, and blames no one.
 */
export function attributeWrites(writes: readonly DetectedWrite[], reruns: readonly Rerun[]): WriteFinding[] {
  const related = (a: string, b: string) =>
    a === b || a.startsWith(`${b}${sep}`) || b.startsWith(`${a}${sep}`);
  return writes.map((write) => {
    const writers = reruns
      .filter((rerun) => rerun.changed.some((change) => related(change.path, write.path)))
      .map((rerun) => rerun.tool);
    if (writers.length === 1) return { ...write, tool: writers[0] ?? null, suspects: [] };
    return { ...write, tool: null, suspects: writers };
  });
}

/**
 * Fails the row of every selftest that wrote outside its tmpDir, or left processes running, naming
 * what it wrote or left.
 */
export function applyVerdicts(
  rows: SelftestRow[],
  findings: readonly WriteFinding[],
  reruns: readonly Rerun[],
): void {
  for (const row of rows) {
    if (row.tool === null) continue;
    const tool = row.tool;
    const own = findings.filter((finding) => finding.tool === tool || finding.suspects.includes(tool));
    if (own.length > 0) fail(row, WROTE_OUTSIDE_TMPDIR, own.map(describeWrite).join('; '));
    const left = reruns.find((rerun) => rerun.tool === tool)?.processesLeft ?? [];
    if (left.length > 0) fail(row, LEFT_PROCESSES, describeProcesses(left));
  }
}

/** The row fails with `code`; a row that failed already keeps its code and says this too. */
function fail(row: SelftestRow, code: string, message: string): void {
  const what = code === WROTE_OUTSIDE_TMPDIR ? `it also wrote outside its tmpDir: ${message}` : message;
  row.error =
    row.status === 'failed' && row.error !== undefined
      ? { code: row.error.code, message: `${row.error.message}; ${what}` }
      : { code, message };
  row.status = 'failed';
}

/** "left 2 processes running after it answered (ended): 4711 sh -c sleep 30; 4712 sleep 30" */
export function describeProcesses(processes: readonly LeftoverProcess[]): string {
  const count = processes.length === 1 ? '1 process' : `${processes.length} processes`;
  const shown = processes.slice(0, 5).map((left) => `${left.pid} ${left.command}`);
  if (processes.length > 5) shown.push(`${processes.length - 5} more`);
  return `left ${count} running after it answered (ended): ${shown.join('; ')}`;
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
