/**
 * `toolhost selftest <package-or-module>...`: every offered tool's selftest, each in a worker with a
 * fresh tmpDir, at most `--jobs` at once; a live display on a terminal, plain lines in a pipe
 * or CI; then a summary table. Without `--isolation` it runs in the strongest tier this machine has.
 * Exit 1 when a selftest failed, a module was left out, a selftest wrote outside its tmpDir or left a
 * process running, or a tmpDir was left behind.
 */
import { availableParallelism } from 'node:os';
import type { CapturedLog } from '../../boundary/protocol.js';
import type { SelftestArgs } from '../args/command-line.js';
import { ExitCode } from '../exit-codes.js';
import type { LeftoverProcess } from '../selftest/leftover-processes.js';
import {
  applyVerdicts,
  countRows,
  describeWrite,
  type SelftestRow,
  type WriteFinding,
} from '../selftest/results.js';
import { type RunOutcome, runInScratch } from '../selftest/run.js';
import { type SelftestTier, selftestTier } from '../selftest/selftest-tier.js';
import { messages, writeMessage } from '../ui/messages.js';
import { renderSummary } from '../ui/selftest-display.js';
import { type CliIo, oneLine, type Style, styleFor } from '../ui/terminal.js';

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

export async function selftestCommand(args: SelftestArgs, io: CliIo, signal: AbortSignal): Promise<ExitCode> {
  const style = styleFor(io.stdout, io.env);
  const jobs = args.jobs ?? availableParallelism();
  const tier = await selftestTier(args.isolation);
  const outcome = await runInScratch({ args, io, signal, jobs, style, tier });
  if (outcome.interrupted) {
    writeMessage(io.stderr, messages.selftestsInterrupted());
    return ExitCode.interrupted;
  }
  applyVerdicts(outcome.rows, outcome.findings, outcome.reruns);
  const strays = outcome.findings.filter((finding) => finding.tool === null && finding.suspects.length === 0);
  const counts = countRows(outcome.rows);
  const ok =
    counts.failed === 0 &&
    counts.leftOut === 0 &&
    strays.length === 0 &&
    outcome.processesLeft.length === 0 &&
    outcome.tmpDirsLeft.length === 0;
  if (args.json) {
    io.stdout.write(`${JSON.stringify(selftestJson(outcome, ok, counts), null, 2)}\n`);
  } else {
    writeReport(io, style, outcome, counts, strays);
  }
  return ok ? ExitCode.ok : ExitCode.failed;
}

function selftestJson(outcome: RunOutcome, ok: boolean, counts: SelftestJson['counts']): SelftestJson {
  const { tier, rows, findings, processesLeft, tmpDirsLeft, logs, faults } = outcome;
  return {
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
}

/** The summary table, then what was left behind, then what each failed selftest printed. */
function writeReport(
  io: CliIo,
  style: Style,
  outcome: RunOutcome,
  counts: SelftestJson['counts'],
  strays: WriteFinding[],
): void {
  const { rows, processesLeft, tmpDirsLeft, logs, faults } = outcome;
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
}
