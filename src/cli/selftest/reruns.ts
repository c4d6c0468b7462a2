/**
 * Pins what a selftest run left (a write outside the tmpDirs, a process still running) on the
 * selftests that do it: each runs again on its own, one after the other, each in a host of its own
 * that loads only its package. Between the host's load and its close nothing else runs, and closing
 * ends every worker (and, in the process tier, the package's process with its process group, cgroup
 * and pid namespace), so nothing one selftest leaves can act during the next one's turn. The
 * processes a selftest left are ended before the last look at the folders, and again after the
 * host closed.
 */
import type { ToolHost } from '../../host/tool-host.js';
import { endLeftoverProcesses, type LeftoverProcess } from './leftover-processes.js';
import type { Rerun } from './results.js';
import { runSelftests } from './runner.js';
import { packageCopies, type WriteTracer } from './write-tracer.js';

export interface RerunPlan {
  /** Each selftest to run again, and the package (or module) it comes from. */
  selftests: ReadonlyArray<{ tool: string; source: string }>;
  /** A new host, made as the run's own was (its tmp root under `tmpRoot`). */
  openHost(): ToolHost;
  tmpRoot: string;
  /** Where writes are looked for; undefined where the sandbox leaves nothing to write to. */
  tracer: WriteTracer | undefined;
  timeoutMs: number | undefined;
  signal: AbortSignal;
}

export async function rerunEach(plan: RerunPlan): Promise<Rerun[]> {
  const reruns: Rerun[] = [];
  for (const { tool, source } of plan.selftests) {
    if (plan.signal.aborted) break;
    reruns.push(await rerunOne(plan, tool, source));
  }
  return reruns;
}

async function rerunOne(plan: RerunPlan, tool: string, source: string): Promise<Rerun> {
  const host = plan.openHost();
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= host.close();
    return closing;
  };
  const onAbort = () => void close();
  plan.signal.addEventListener('abort', onAbort, { once: true });
  const processesLeft: LeftoverProcess[] = [];
  try {
    // It loaded once already in this run: a load that fails now has nothing to pin.
    const loaded = await host.load(source).then(
      () => true,
      () => false,
    );
    const watch =
      loaded && plan.tracer !== undefined
        ? await plan.tracer.watchRerun(await packageCopies(host.status(), plan.tmpRoot))
        : undefined;
    // What the package's modules left running as they were read is not the selftest's doing (the
    // run's own list names it already).
    endLeftoverProcesses();
    if (loaded) {
      await runSelftests(host, [{ tool }], {
        concurrency: 1,
        timeoutMs: plan.timeoutMs,
        signal: plan.signal,
        onStart: () => {},
        onFinish: () => {},
      });
    }
    processesLeft.push(...endLeftoverProcesses());
    if (watch !== undefined) await plan.tracer?.settleRerun(watch);
    await close();
    processesLeft.push(...endLeftoverProcesses());
    const changed = watch === undefined ? [] : ((await plan.tracer?.rerunChanges(watch)) ?? []);
    return { tool, changed, processesLeft };
  } finally {
    plan.signal.removeEventListener('abort', onAbort);
    await close();
  }
}
