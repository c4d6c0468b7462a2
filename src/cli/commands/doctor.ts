/**
 * `toolhost doctor`: what each isolation tier can do on this machine and, for anything missing, the
 * exact fix. Exit 0 when the default tier runs at full strength here (the process tier in bubblewrap
 * on Linux; under Node's permission model elsewhere), 1 when it doesn't.
 */

import type { DoctorArgs } from '../args/command-line.js';
import { doctorReport } from '../doctor/report.js';
import { ExitCode } from '../exit-codes.js';
import { writeDoctorReport } from '../ui/doctor-display.js';
import type { CliIo } from '../ui/terminal.js';

export async function doctorCommand(args: DoctorArgs, io: CliIo): Promise<ExitCode> {
  const report = await doctorReport(io.env);
  if (args.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else writeDoctorReport(io.stdout, report);
  return report.ok ? ExitCode.ok : ExitCode.failed;
}
