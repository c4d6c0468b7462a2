/**
 * The ToolHost a command works with: options from the command line, a logger that leaves reporting
 * to the command, and the packages loaded one after the other (so that, between two tools of one
 * name, the one named first on the command line wins).
 */

import { ToolHostError } from '../../boundary/errors.js';
import { DEFAULT_TIER } from '../../calls/isolation.js';
import { isNetworkNotice } from '../../calls/worker-flags.js';
import type { LoadReport } from '../../host/events.js';
import type { ToolHostOptions } from '../../host/options.js';
import { ToolHost } from '../../host/tool-host.js';
import {
  describeHold,
  isProcessTierNotice,
  type ProcessTierHold,
  processTierHold,
} from '../../process/sandbox/process-tier.js';
import type { ModuleStatus } from '../../registry/generation.js';
import type { Logger } from '../../shared/logger.js';
import type { DataDirArgs, HostArgs } from '../args/command-line.js';
import type { CommandName } from '../args/command-names.js';
import { optionsSetBy } from '../args/flags.js';
import { messages, writeMessage } from '../ui/messages.js';
import type { OutputStream } from '../ui/terminal.js';

/**
 * The command shows left-out modules and tool output itself, so the host's warnings would only repeat
 * them; an error (a host fault) still goes to stderr, and so does what the process tier lacks on this
 * machine (no sandbox, say), which nothing else would tell, and what a tier does with a package's
 * network grant (as `serve` says it), without which the grants a listing shows would mislead.
 */
export function commandLogger(stderr: OutputStream): Logger {
  return {
    info: () => {},
    warn: (message) => {
      if (isProcessTierNotice(message)) writeMessage(stderr, messages.isolationNotice(message));
      else if (isNetworkNotice(message)) writeMessage(stderr, messages.hostWarning(message));
    },
    error: (message) => writeMessage(stderr, messages.hostError(message)),
  };
}

/** What a command adds to the options its flags give. */
export interface HostSetup extends ToolHostOptions {
  /**
   * A server runs for hours, so a declaration read that ran over its time bound is tried again on
   * the host's schedule; a command ends long before a re-read 1 minute later could run, so there
   * such a read simply leaves the module out.
   * @default false
   */
  longRunning?: boolean;
}

/** The host's options: each flag that sets one (see `hostOption` in flags.ts), then `setup`'s. */
export function hostOptions(
  args: HostArgs & Partial<DataDirArgs> & { command: CommandName },
  stderr: OutputStream,
  setup: HostSetup = {},
): ToolHostOptions {
  const { longRunning = false, ...extra } = setup;
  return {
    logger: commandLogger(stderr),
    ...(longRunning ? {} : { rereadDelaysMs: [] }),
    ...(optionsSetBy(args.command, args, 'hostOption') as ToolHostOptions),
    ...extra,
  };
}

/**
 * The command's host. Without `--isolation` it runs the default tier, the strongest; what holds a
 * package in it here is found before the host is built and said once on stderr (never on stdout,
 * which may carry `--json` or the MCP channel): the user learns which boundary holds, and the flag
 * that chooses another.
 */
export async function createHost(
  args: HostArgs & Partial<DataDirArgs> & { command: CommandName },
  stderr: OutputStream,
  setup: HostSetup = {},
): Promise<ToolHost> {
  const options = hostOptions(args, stderr, setup);
  if (options.isolation !== undefined) return new ToolHost(options);
  const hold = await processTierHold();
  writeMessage(stderr, messages.isolationDefault(DEFAULT_TIER, `${describeHold(hold)}${DOCTOR_HINTS[hold]}`));
  return new ToolHost({ ...options, isolation: DEFAULT_TIER });
}

/** Where the default tier holds less than it can, what the line that names it adds. */
const DOCTOR_HINTS: Record<ProcessTierHold, string> = {
  sandbox: '',
  'permission-model': ' (no bubblewrap sandbox here: toolhost doctor says why)',
  none: ' (toolhost doctor says what is missing)',
};

/** A path as the user typed it, and the path to load (the same, or made absolute before a chdir). */
export interface SourcePath {
  shown: string;
  path: string;
}

/**
 * Loads each path in order, once. A missing path or a folder that is not a tool package throws a
 * ToolHostError (a usage error), whose message names the path as the user typed it.
 */
export async function loadAll(
  host: ToolHost,
  paths: readonly SourcePath[],
): Promise<Array<LoadReport & { shown: string }>> {
  const reports: Array<LoadReport & { shown: string }> = [];
  for (const { shown, path } of paths) {
    let report: LoadReport;
    try {
      report = await host.load(path);
    } catch (error) {
      if (error instanceof ToolHostError && shown !== path) {
        throw new ToolHostError(error.code, error.message.replaceAll(path, shown), { cause: error });
      }
      throw error;
    }
    if (!reports.some((known) => known.source === report.source)) reports.push({ ...report, shown });
  }
  return reports;
}

/** The modules by source, in the order the sources were given, then by module path. */
export function inSourceOrder(statuses: readonly ModuleStatus[], sources: readonly string[]): ModuleStatus[] {
  const rank = (status: ModuleStatus) => {
    const index = sources.indexOf(status.source);
    return index === -1 ? sources.length : index;
  };
  return [...statuses].sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
}
