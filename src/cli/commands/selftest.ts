/**
 * `toolhost selftest <package-or-module>...`: every offered tool's selftest, each in a worker with a
 * fresh tmpDir, at most `--concurrency` at once; a live display on a terminal, plain lines in a pipe
 * or CI; then a summary table. Exit 1 when a selftest failed, a module was left out, a selftest wrote
 * outside its tmpDir, or a tmpDir was left behind.
 */
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { CapturedLog } from '../../boundary/protocol.js';
import type { ToolHost } from '../../host/tool-host.js';
import type { ModuleStatus } from '../../registry/registry.js';
import { snapshotFoldersOf } from '../../snapshot/layout.js';
import type { SelftestArgs } from '../args/args.js';
import { ExitCode } from '../exit-codes.js';
import {
  applyWrites,
  countRows,
  describeWrite,
  leftOutRow,
  type RunWindow,
  reportRow,
  type SelftestRow,
  type WriteFinding,
} from '../selftest/results.js';
import { type FinishedSelftest, runSelftests } from '../selftest/runner.js';
import { hostWithTmpRoot, leftoverTmpDirs, makeScratch, removeScratch } from '../selftest/scratch.js';
import { WriteTracer } from '../selftest/write-tracer.js';
import { messages, writeMessage } from '../ui/messages.js';
import { createSelftestDisplay, renderSummary } from '../ui/selftest-display.js';
import { type CliIo, oneLine, type Style, styleFor } from '../ui/terminal.js';
import { hostOptions, inSourceOrder, loadAll } from './host-setup.js';

/** The `--json` document. */
export interface SelftestJson {
  ok: boolean;
  counts: ReturnType<typeof countRows>;
  results: Array<SelftestRow & { output?: CapturedLog[] }>;
  writesOutsideTmpDir: Array<{
    path: string;
    place: WriteFinding['place'];
    change: WriteFinding['change'];
    tool: string | null;
    suspects: string[];
  }>;
  tmpDirsLeft: string[];
  faults: Array<{ source: string; message: string }>;
}

interface RunOutcome {
  rows: SelftestRow[];
  findings: WriteFinding[];
  tmpDirsLeft: string[];
  logs: Map<string, CapturedLog[]>;
  faults: Array<{ source: string; message: string }>;
  interrupted: boolean;
}

export async function selftestCommand(args: SelftestArgs, io: CliIo, signal: AbortSignal): Promise<ExitCode> {
  const style = styleFor(io.stdout, io.env);
  const concurrency = args.concurrency ?? availableParallelism();
  const outcome = await runInScratch(args, io, signal, concurrency, style);
  if (outcome.interrupted) {
    writeMessage(io.stderr, messages.selftestsInterrupted());
    return ExitCode.interrupted;
  }
  const { rows, findings, tmpDirsLeft, logs, faults } = outcome;
  applyWrites(rows, findings);
  const strays = findings.filter((finding) => finding.tool === null);
  const counts = countRows(rows);
  const ok = counts.failed === 0 && counts.leftOut === 0 && strays.length === 0 && tmpDirsLeft.length === 0;

  if (args.json) {
    const document: SelftestJson = {
      ok,
      counts,
      results: rows.map((row) => {
        const output = row.tool === null ? undefined : logs.get(row.tool);
        return output === undefined ? row : { ...row, output };
      }),
      writesOutsideTmpDir: findings.map((finding) => ({
        path: finding.path,
        place: finding.place,
        change: finding.change,
        tool: finding.tool,
        suspects: finding.suspects,
      })),
      tmpDirsLeft,
      faults,
    };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    return ok ? ExitCode.ok : ExitCode.failed;
  }

  io.stdout.write(`\n${renderSummary({ rows, counts, style, stream: io.stdout, env: io.env })}`);
  if (strays.length > 0) {
    io.stdout.write(`\n${style.red('Written outside any tmpDir')} (not traced to one selftest):\n`);
    for (const finding of strays) {
      const when =
        finding.suspects.length > 0
          ? `while ${finding.suspects.join(', ')} ran`
          : finding.mtimeMs === undefined
            ? 'removed'
            : 'while declarations were read, or after the selftests';
      io.stdout.write(`  ${describeWrite(finding)} (${when})\n`);
    }
  }
  if (tmpDirsLeft.length > 0) {
    io.stdout.write(`\n${style.red('Temp dirs left behind')} (removed now):\n`);
    for (const path of tmpDirsLeft) io.stdout.write(`  ${path}\n`);
  }
  for (const row of rows) {
    const output = row.tool === null ? undefined : logs.get(row.tool);
    if (row.status !== 'failed' || output === undefined) continue;
    io.stdout.write(`\n${style.bold(`What ${row.tool}'s selftest printed:`)}\n`);
    const text = output.map((log) => log.text).join('');
    for (const line of text.replace(/\n$/, '').split('\n')) io.stdout.write(`  ${style.dim('│')} ${line}\n`);
  }
  for (const fault of faults) writeMessage(io.stderr, messages.fault(fault.source, oneLine(fault.message)));
  return ok ? ExitCode.ok : ExitCode.failed;
}

async function runInScratch(
  args: SelftestArgs,
  io: CliIo,
  signal: AbortSignal,
  concurrency: number,
  style: Style,
): Promise<RunOutcome> {
  const launchDirectory = process.cwd();
  const paths = args.paths.map((shown) => ({ shown, path: resolve(shown) }));
  const scratch = await makeScratch();
  let host: ToolHost | undefined;
  let closing: Promise<void> | undefined;
  const close = async () => {
    if (host !== undefined) closing ??= host.close();
    await closing;
  };
  const onAbort = () => void close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const tracer = await WriteTracer.start({
      paths: paths.map(({ path }) => path),
      scratch,
      launchDirectory,
    });
    // Relative writes (by a module as it loads, or by a selftest) land in the scratch folder.
    process.chdir(scratch.workingDirectory);
    const opened = hostWithTmpRoot(
      hostOptions(args, io.stderr, {
        dataDir: scratch.dataDir,
        selftestConcurrency: concurrency,
        // One spare thread per lane, for a worker still ending after its selftest answered.
        maxThreadsPerPool: concurrency * 2,
      }),
      scratch.tmpRoot,
    );
    host = opened;
    const logs = new Map<string, CapturedLog[]>();
    const faults: Array<{ source: string; message: string }> = [];
    opened.on('output', (event) =>
      logs.set(event.toolName, [...(logs.get(event.toolName) ?? []), ...event.logs]),
    );
    opened.on('fault', (fault) => faults.push(fault));

    const readStarted = Date.now();
    const reports = await loadAll(opened, paths);
    await tracer.watchSnapshots(await snapshotsOf(opened.status(), scratch.tmpRoot));
    const windows: RunWindow[] = [{ tool: null, startedAt: readStarted, endedAt: Date.now() }];

    const statuses = inSourceOrder(
      opened.status(),
      reports.map((report) => report.source),
    );
    const offered = new Map<string, ModuleStatus>();
    for (const status of statuses) {
      if (status.state === 'offered' && status.name !== undefined) offered.set(status.name, status);
    }
    const shown = args.json
      ? undefined
      : createSelftestDisplay({ stream: io.stdout, env: io.env, style, total: statuses.length });
    const rowsByPath = new Map<string, SelftestRow>();
    for (const status of statuses) {
      if (status.state === 'offered') continue;
      const row = leftOutRow(status);
      rowsByPath.set(status.path, row);
      shown?.finished(row);
    }
    const finished: FinishedSelftest[] = await runSelftests(
      opened,
      [...offered.keys()].map((tool) => ({ tool })),
      {
        concurrency,
        timeoutMs: args.timeoutMs,
        signal,
        onStart: (job) => shown?.running(job.tool),
        onFinish: ({ job, report }) => {
          const status = offered.get(job.tool);
          if (status === undefined) return;
          const row = reportRow(status, report, { requireSelftest: args.requireSelftests });
          rowsByPath.set(status.path, row);
          shown?.finished(row);
        },
      },
    );
    shown?.stop();
    for (const run of finished)
      windows.push({ tool: run.job.tool, startedAt: run.startedAt, endedAt: run.endedAt });

    const suspects = signal.aborted ? [] : await tracer.suspects(windows);
    if (suspects.length > 0 && !args.json) {
      io.stdout.write(
        `${style.dim(`Something was written outside the tmpDirs while ${suspects.join(', ')} ran: running them again one at a time to see which one wrote it`)}\n`,
      );
    }
    for (const tool of suspects) {
      if (signal.aborted) break;
      await tracer.rerun(tool, () =>
        runSelftests(opened, [{ tool }], {
          concurrency: 1,
          timeoutMs: args.timeoutMs,
          signal,
          onStart: () => {},
          onFinish: () => {},
        }),
      );
    }

    // The host's snapshots go with it: their last look is now, every selftest having answered.
    await tracer.settleSnapshots();
    // Closing ends every worker (a selftest still running past a `--timeout` too) and removes the
    // host's temp root; only then can nothing write any more.
    await close();
    process.chdir(launchDirectory);
    const findings = await tracer.findings(windows);
    const tmpDirsLeft = await leftoverTmpDirs(scratch);
    const rows = statuses.flatMap((status) => rowsByPath.get(status.path) ?? []);
    return { rows, findings, tmpDirsLeft, logs, faults, interrupted: signal.aborted };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await close();
    if (process.cwd() !== launchDirectory) process.chdir(launchDirectory);
    await removeScratch(scratch);
  }
}

/** Where the loaded packages' snapshots are: each package's current version, once. */
async function snapshotsOf(
  statuses: readonly ModuleStatus[],
  tmpDir: string,
): Promise<Array<{ folder: string; packageRoot: string }>> {
  const versions = new Map<string, string>();
  for (const status of statuses)
    if (status.version !== undefined) versions.set(status.source, status.version);
  const found = await Promise.all(
    [...versions].map(async ([source, version]) => {
      // A module loaded on its own is copied alone: its copy stands for its folder's own entries.
      const packageRoot = statuses.some((status) => status.path === source) ? dirname(source) : source;
      const folders = await snapshotFoldersOf(tmpDir, source, version);
      return folders.map((folder) => ({ folder, packageRoot }));
    }),
  );
  return found.flat();
}
