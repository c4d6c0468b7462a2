/**
 * Runs selftests one tool at a time through `host.selftest([name])`, at most `concurrency` at once,
 * so the command can show each result as it comes.
 */
import type { SelftestReport } from '../../host/events.js';
import type { ToolHost } from '../../host/tool-host.js';

export interface SelftestJob {
  tool: string;
}

export interface FinishedSelftest {
  job: SelftestJob;
  report: SelftestReport;
  /** Wall-clock times (epoch ms, as file times are) of the selftest's start and end. */
  startedAt: number;
  endedAt: number;
}

export interface RunnerOptions {
  concurrency: number;
  /** Caps each selftest's time (the tool's own `timeoutMs` applies too). */
  timeoutMs: number | undefined;
  /** Stops starting selftests; the ones running end when the host closes. */
  signal: AbortSignal;
  onStart(job: SelftestJob): void;
  onFinish(finished: FinishedSelftest): void;
}

export async function runSelftests(
  host: ToolHost,
  jobs: readonly SelftestJob[],
  options: RunnerOptions,
): Promise<FinishedSelftest[]> {
  const finished: FinishedSelftest[] = [];
  let next = 0;
  const lane = async () => {
    while (next < jobs.length && !options.signal.aborted) {
      const job = jobs[next++];
      if (job === undefined) break;
      options.onStart(job);
      const startedAt = Date.now();
      const report = await selftestWithCap(host, job.tool, options.timeoutMs);
      const done = { job, report, startedAt, endedAt: Date.now() };
      finished.push(done);
      options.onFinish(done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, jobs.length)) }, lane));
  return finished;
}

/** One selftest, capped at `timeoutMs` by the host (which ends the worker at the cap). */
async function selftestWithCap(
  host: ToolHost,
  tool: string,
  timeoutMs: number | undefined,
): Promise<SelftestReport> {
  const started = performance.now();
  return host.selftest([tool], timeoutMs === undefined ? {} : { timeoutMs }).then(
    (reports): SelftestReport =>
      reports[0] ?? {
        name: tool,
        status: 'failed',
        durationMs: 0,
        error: { code: 'UNKNOWN_TOOL', message: `the host ran no selftest for "${tool}"` },
      },
    (error: unknown): SelftestReport => ({
      name: tool,
      status: 'failed',
      durationMs: Math.round(performance.now() - started),
      error: { code: 'HOST_CLOSED', message: error instanceof Error ? error.message : String(error) },
    }),
  );
}
