/**
 * `host.selftest()`: each named tool's selftest in a worker with a fresh tmpDir, a few at a time,
 * each reported as passed, failed (and why) or without a selftest.
 */

import { outcomeText, type ToolOutcome } from '../boundary/outcome.js';
import type { SelftestReport } from '../host/events.js';
import type { OfferedTool } from '../registry/generation.js';
import { mapLimit } from '../shared/limit.js';

export interface SelftestRun {
  concurrency: number;
  /** The tool offered under `name` now, if any. */
  lookup(name: string): OfferedTool | undefined;
  run(tool: OfferedTool): Promise<ToolOutcome>;
}

export async function runSelftests(names: readonly string[], run: SelftestRun): Promise<SelftestReport[]> {
  return mapLimit(names, run.concurrency, (name) => selftestOne(name, run));
}

async function selftestOne(name: string, run: SelftestRun): Promise<SelftestReport> {
  const tool = run.lookup(name);
  if (tool === undefined) {
    return {
      name,
      status: 'failed',
      durationMs: 0,
      error: { code: 'UNKNOWN_TOOL', message: `unknown tool "${name}"` },
    };
  }
  if (!tool.hasSelftest) return { name, status: 'no-selftest', durationMs: 0 };
  const started = performance.now();
  const outcome = await run.run(tool);
  const durationMs = Math.round(performance.now() - started);
  if (!outcome.isError) return { name, status: 'passed', durationMs };
  return {
    name,
    status: 'failed',
    durationMs,
    error: outcome.error ?? { code: 'TOOL_ERROR_RESULT', message: outcomeText(outcome) },
  };
}
