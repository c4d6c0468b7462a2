/**
 * One `toolhost selftest` run, in its stages: the scratch folder (see scratch.ts), the first run of
 * every selftest in one host, the settling (processes left running, the host closed, what changed),
 * the reruns that pin a change on the selftests that make it again, and the rows of the verdict.
 */
import type { CapturedLog } from '../../boundary/protocol.js';
import type { ToolHost } from '../../host/tool-host.js';
import type { ModuleStatus } from '../../registry/generation.js';
import type { SelftestArgs } from '../args/command-line.js';
import { hostOptions, inSourceOrder, loadAll } from '../commands/host-setup.js';
import { createSelftestDisplay } from '../ui/selftest-display.js';
import type { CliIo, OutputStream, Style } from '../ui/terminal.js';
import { endLeftoverProcesses, type LeftoverProcess } from './leftover-processes.js';
import { rerunEach } from './reruns.js';
import {
  attributeWrites,
  leftOutRow,
  type Rerun,
  reportRow,
  type SelftestRow,
  type WriteFinding,
} from './results.js';
import { type FinishedSelftest, runSelftests } from './runner.js';
import { leftoverTmpDirs, ScratchRun } from './scratch.js';
import { describeTier, type SelftestTier } from './selftest-tier.js';
import { packageCopies, WriteTracer } from './write-tracer.js';
import type { DetectedWrite } from './write-watch.js';

export interface RunOptions {
  args: SelftestArgs;
  io: CliIo;
  signal: AbortSignal;
  /** Selftests running at once. */
  jobs: number;
  style: Style;
  tier: SelftestTier;
}

export interface RunOutcome {
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

/** What the first run found: a row per module, and what each offered tool's selftest did. */
interface FirstRun {
  statuses: ModuleStatus[];
  offered: Map<string, ModuleStatus>;
  rowsByPath: Map<string, SelftestRow>;
  finished: FinishedSelftest[];
  logs: Map<string, CapturedLog[]>;
  faults: Array<{ source: string; message: string }>;
}

/** A stream for hosts whose notices were said once already (the reruns' hosts). */
const QUIET: OutputStream = { write: () => true };

/** Runs every selftest in a scratch folder of its own, removed afterwards, and judges what they left. */
export async function runInScratch(options: RunOptions): Promise<RunOutcome> {
  const { args, signal, jobs, tier } = options;
  const run = await ScratchRun.open({
    paths: args.paths,
    signal,
    hostOptions: (stderr, scratch) =>
      hostOptions({ ...args, isolation: tier.tier }, stderr, {
        dataDir: scratch.dataDir,
        maxConcurrentSelftests: jobs,
        // One spare thread per lane, for a worker still ending after its selftest answered.
        maxThreadsPerPool: jobs * 2,
      }),
  });
  try {
    // In the sandbox a tool has nothing outside its tmp folder to write to: nothing to watch.
    const tracer = tier.watchWrites
      ? await WriteTracer.start({
          paths: run.paths.map(({ path }) => path),
          scratch: run.scratch,
          launchDirectory: run.launchDirectory,
        })
      : undefined;
    run.enter();
    const first = await firstRun(run, tracer, options);
    const { processesLeft, changes } = await settle(run, tracer, signal);
    const reruns = await rerunIfNeeded(
      run,
      tracer,
      options,
      first,
      changes.length > 0 || processesLeft.length > 0,
    );
    run.leave();
    return {
      tier,
      rows: first.statuses.flatMap((status) => first.rowsByPath.get(status.path) ?? []),
      findings: attributeWrites(changes, reruns),
      reruns,
      processesLeft,
      tmpDirsLeft: await leftoverTmpDirs(run.scratch),
      logs: first.logs,
      faults: first.faults,
      interrupted: signal.aborted,
    };
  } finally {
    await run.dispose();
  }
}

/** Loads the packages in the run's host and runs every offered tool's selftest, shown as it goes. */
async function firstRun(
  run: ScratchRun,
  tracer: WriteTracer | undefined,
  options: RunOptions,
): Promise<FirstRun> {
  const { args, io, style } = options;
  const host = run.runHost(io.stderr);
  const logs = new Map<string, CapturedLog[]>();
  const faults: FirstRun['faults'] = [];
  host.on('output', (event) => logs.set(event.name, [...(logs.get(event.name) ?? []), ...event.logs]));
  host.on('fault', (fault) => faults.push(fault));

  const reports = await loadAll(host, run.paths);
  // Said once the paths are known to be packages: a usage error prints nothing on stdout.
  if (!args.json) io.stdout.write(`${style.dim(describeTier(options.tier))}\n`);
  await tracer?.watchCopies(await packageCopies(host.status(), run.scratch.tmpRoot));

  const statuses = inSourceOrder(
    host.status(),
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
  const show = (path: string, row: SelftestRow) => {
    rowsByPath.set(path, row);
    shown?.finished(row);
  };
  for (const status of statuses) if (status.state !== 'offered') show(status.path, leftOutRow(status));
  const finished = await runSelftests(host, selftestJobs(offered), {
    concurrency: options.jobs,
    timeoutMs: args.timeoutMs,
    signal: options.signal,
    onStart: (job) => shown?.running(job.tool),
    onFinish: ({ job, report }) => {
      const status = offered.get(job.tool);
      if (status !== undefined)
        show(status.path, reportRow(status, report, { requireSelftest: args.requireSelftests }));
    },
  });
  shown?.stop();
  return { statuses, offered, rowsByPath, finished, logs, faults };
}

function selftestJobs(offered: ReadonlyMap<string, ModuleStatus>): Array<{ tool: string }> {
  return [...offered.keys()].map((tool) => ({ tool }));
}

/**
 * Every selftest has answered: what still runs was left running. It is ended before the last look,
 * and so is whatever outlived the host's close (which ends every worker, a selftest still running
 * past a `--timeout` too, and removes the host's temp root).
 */
async function settle(
  run: ScratchRun,
  tracer: WriteTracer | undefined,
  signal: AbortSignal,
): Promise<{ processesLeft: LeftoverProcess[]; changes: DetectedWrite[] }> {
  const processesLeft = endLeftoverProcesses();
  await tracer?.settleCopies();
  await run.closeHost();
  processesLeft.push(...endLeftoverProcesses());
  const changes = signal.aborted || tracer === undefined ? [] : await tracer.changes();
  return { processesLeft, changes };
}

/** When something was left, runs each selftest again on its own to see which one left it. */
async function rerunIfNeeded(
  run: ScratchRun,
  tracer: WriteTracer | undefined,
  options: RunOptions,
  first: FirstRun,
  somethingLeft: boolean,
): Promise<Rerun[]> {
  const { args, io, style, signal } = options;
  if (!somethingLeft || signal.aborted) return [];
  if (!args.json) {
    io.stdout.write(
      `${style.dim('Something was written outside the tmpDirs or left running: running each selftest again on its own to see which one did it')}\n`,
    );
  }
  return rerunEach({
    selftests: first.finished.flatMap(({ job, report }) => {
      const status = first.offered.get(job.tool);
      return status === undefined || report.status === 'no-selftest'
        ? []
        : [{ tool: job.tool, source: status.source }];
    }),
    openHost: (): ToolHost => run.newHost(QUIET),
    tmpRoot: run.scratch.tmpRoot,
    tracer,
    timeoutMs: args.timeoutMs,
    signal,
  });
}
