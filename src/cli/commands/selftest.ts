/**
 * `toolhost selftest <package-or-module>...`: every offered tool's selftest, each in a worker with a
 * fresh tmpDir, at most `--concurrency` at once; a live display on a terminal, plain lines in a pipe
 * or CI; then a summary table. Without `--isolation` it runs in the strongest tier this machine has.
 * Exit 1 when a selftest failed, a module was left out, a selftest wrote outside its tmpDir or left a
 * process running, or a tmpDir was left behind.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { CapturedLog } from '../../boundary/protocol.js';
import type { ToolHost } from '../../host/tool-host.js';
import type { ModuleStatus } from '../../registry/generation.js';
import type { SelftestArgs } from '../args/args.js';
import { ExitCode } from '../exit-codes.js';
import { endLeftoverProcesses, type LeftoverProcess } from '../selftest/leftover-processes.js';
import { rerunEach } from '../selftest/reruns.js';
import {
  applyVerdicts,
  attributeWrites,
  countRows,
  describeWrite,
  leftOutRow,
  type Rerun,
  reportRow,
  type SelftestRow,
  type WriteFinding,
} from '../selftest/results.js';
import { type FinishedSelftest, runSelftests } from '../selftest/runner.js';
import { hostWithTmpRoot, leftoverTmpDirs, makeScratch, removeScratch } from '../selftest/scratch.js';
import { describeTier, type SelftestTier, selftestTier } from '../selftest/selftest-tier.js';
import { packageCopies, WriteTracer } from '../selftest/write-tracer.js';
import { messages, writeMessage } from '../ui/messages.js';
import { createSelftestDisplay, renderSummary } from '../ui/selftest-display.js';
import { type CliIo, type OutputStream, oneLine, type Style, styleFor } from '../ui/terminal.js';
import { hostOptions, inSourceOrder, loadAll } from './host-setup.js';

/** The `--json` document. */
export interface SelftestJson {
  ok: boolean;
  /** The tier the selftests ran in, and whether bubblewrap sandboxed it. */
  isolation: { tier: SelftestTier['tier']; sandboxed: boolean; chosen: boolean };
  counts: ReturnType<typeof countRows>;
  results: Array<SelftestRow & { output?: CapturedLog[] }>;
  writesOutsideTmpDir: Array<{
    path: string;
    place: WriteFinding['place'];
    change: WriteFinding['change'];
    tool: string | null;
    suspects: string[];
  }>;
  /** Processes still running once every selftest had answered (all ended before the last look). */
  processesLeft: LeftoverProcess[];
  tmpDirsLeft: string[];
  faults: Array<{ source: string; message: string }>;
}

interface RunOutcome {
  tier: SelftestTier;
  rows: SelftestRow[];
  findings: WriteFinding[];
  reruns: Rerun[];
  processesLeft: LeftoverProcess[];
  tmpDirsLeft: string[];
  logs: Map<string, CapturedLog[]>;
  faults: Array<{ source: string; message: string }>;
  interrupted: boolean;
}

export async function selftestCommand(args: SelftestArgs, io: CliIo, signal: AbortSignal): Promise<ExitCode> {
  const style = styleFor(io.stdout, io.env);
  const concurrency = args.concurrency ?? availableParallelism();
  const tier = await selftestTier(args.isolation);
  const outcome = await runInScratch({ args, io, signal, concurrency, style, tier });
  if (outcome.interrupted) {
    writeMessage(io.stderr, messages.selftestsInterrupted());
    return ExitCode.interrupted;
  }
  const { rows, findings, reruns, processesLeft, tmpDirsLeft, logs, faults } = outcome;
  applyVerdicts(rows, findings, reruns);
  const strays = findings.filter((finding) => finding.tool === null && finding.suspects.length === 0);
  const counts = countRows(rows);
  const ok =
    counts.failed === 0 &&
    counts.leftOut === 0 &&
    strays.length === 0 &&
    processesLeft.length === 0 &&
    tmpDirsLeft.length === 0;

  if (args.json) {
    const document: SelftestJson = {
      ok,
      isolation: { tier: tier.tier, sandboxed: tier.sandboxed, chosen: tier.chosen },
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
      processesLeft,
      tmpDirsLeft,
      faults,
    };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    return ok ? ExitCode.ok : ExitCode.failed;
  }

  io.stdout.write(`\n${renderSummary({ rows, counts, style, stream: io.stdout, env: io.env })}`);
  if (strays.length > 0) {
    io.stdout.write(
      `\n${style.red('Written outside any tmpDir')} (no selftest did it again when run on its own):\n`,
    );
    for (const finding of strays) io.stdout.write(`  ${describeWrite(finding)}\n`);
  }
  if (processesLeft.length > 0) {
    io.stdout.write(`\n${style.red('Processes left running')} after the selftests answered (ended):\n`);
    for (const left of processesLeft) io.stdout.write(`  ${left.pid} ${left.command}\n`);
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

/** A stream for hosts whose notices were said once already (the reruns' hosts). */
const QUIET: OutputStream = { write: () => true };

async function runInScratch(options: {
  args: SelftestArgs;
  io: CliIo;
  signal: AbortSignal;
  concurrency: number;
  style: Style;
  tier: SelftestTier;
}): Promise<RunOutcome> {
  const { args, io, signal, concurrency, style, tier } = options;
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
  const openHost = (stderr: OutputStream) =>
    hostWithTmpRoot(
      hostOptions({ ...args, isolation: tier.tier }, stderr, {
        dataDir: scratch.dataDir,
        maxConcurrentSelftests: concurrency,
        // One spare thread per lane, for a worker still ending after its selftest answered.
        maxThreadsPerPool: concurrency * 2,
      }),
      scratch.tmpRoot,
    );
  try {
    // In the sandbox a tool has nothing outside its tmp folder to write to: nothing to watch.
    const tracer = tier.watchWrites
      ? await WriteTracer.start({ paths: paths.map(({ path }) => path), scratch, launchDirectory })
      : undefined;
    // Relative writes (by a module as it loads, or by a selftest) land in the scratch folder.
    process.chdir(scratch.workingDirectory);
    const opened = openHost(io.stderr);
    host = opened;
    const logs = new Map<string, CapturedLog[]>();
    const faults: Array<{ source: string; message: string }> = [];
    opened.on('output', (event) => logs.set(event.name, [...(logs.get(event.name) ?? []), ...event.logs]));
    opened.on('fault', (fault) => faults.push(fault));

    const reports = await loadAll(opened, paths);
    // Said once the paths are known to be packages: a usage error prints nothing on stdout.
    if (!args.json) io.stdout.write(`${style.dim(describeTier(tier))}\n`);
    await tracer?.watchCopies(await packageCopies(opened.status(), scratch.tmpRoot));

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

    // Every selftest has answered: what still runs was left running. It is ended before the last
    // look, and so is whatever outlived the host's close (which ends every worker, a selftest still
    // running past a `--timeout` too, and removes the host's temp root).
    const processesLeft = endLeftoverProcesses();
    await tracer?.settleCopies();
    await close();
    processesLeft.push(...endLeftoverProcesses());
    const changes = signal.aborted || tracer === undefined ? [] : await tracer.changes();

    let reruns: Rerun[] = [];
    if ((changes.length > 0 || processesLeft.length > 0) && !signal.aborted) {
      if (!args.json) {
        io.stdout.write(
          `${style.dim('Something was written outside the tmpDirs or left running: running each selftest again on its own to see which one did it')}\n`,
        );
      }
      reruns = await rerunEach({
        selftests: finished.flatMap(({ job, report }) => {
          const status = offered.get(job.tool);
          return status === undefined || report.status === 'no-selftest'
            ? []
            : [{ tool: job.tool, source: status.source }];
        }),
        openHost: () => openHost(QUIET),
        tmpRoot: scratch.tmpRoot,
        tracer,
        timeoutMs: args.timeoutMs,
        signal,
      });
    }
    process.chdir(launchDirectory);
    const findings = attributeWrites(changes, reruns);
    const tmpDirsLeft = await leftoverTmpDirs(scratch);
    const rows = statuses.flatMap((status) => rowsByPath.get(status.path) ?? []);
    return {
      tier,
      rows,
      findings,
      reruns,
      processesLeft,
      tmpDirsLeft,
      logs,
      faults,
      interrupted: signal.aborted,
    };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await close();
    if (process.cwd() !== launchDirectory) process.chdir(launchDirectory);
    await removeScratch(scratch);
  }
}
