/**
 * `toolhost pin <package-or-module>... [--lock FILE]`: reads each module's declaration as `list`
 * does, and records every offered tool in the lock file (its checked declaration and digest, and
 * the digest of its package's content), keeping the entries of other packages. Prints what it
 * pinned and, for an entry pinned before, what changed. Exit 1 when a module was left out (it is
 * not pinned), 2 for a lock file that exists but is not a lock.
 */
import type { PinChange } from '../../lock/pin.js';
import type { PinArgs } from '../args/command-line.js';
import { ExitCode } from '../exit-codes.js';
import { differenceLines } from '../ui/difference.js';
import { pathInPackage } from '../ui/package-paths.js';
import { type CliIo, oneLine, type Style, styleFor } from '../ui/terminal.js';
import { createHost, inSourceOrder, loadAll } from './host-setup.js';

/** The `--json` document. */
export interface PinJson {
  ok: boolean;
  lockFile: string;
  changes: PinChange[];
  /** Modules not pinned because they are left out (with their reasons). */
  leftOut: Array<{ module: string; name: string | null; code: string; reason: string }>;
}

export async function pinCommand(args: PinArgs, io: CliIo): Promise<ExitCode> {
  // The lock being written is never the one enforced: pinning records what is read now.
  const host = await createHost({ ...args, lock: undefined }, io.stderr);
  try {
    const reports = await loadAll(
      host,
      args.paths.map((path) => ({ shown: path, path })),
    );
    const report = await host.pin({ lockFile: args.lock });
    const sources = reports.map((loaded) => loaded.source);
    const leftOut = inSourceOrder(host.status(), sources)
      .filter((status) => status.state !== 'offered')
      .map((status) => ({
        module: pathInPackage(status.source, status.path),
        name: status.name ?? null,
        code: status.code ?? 'LEFT_OUT',
        reason: status.reason ?? `the module is ${status.state}`,
      }));
    // Read and offered, but not what a lock can hold.
    for (const module of report.notPinned) {
      leftOut.push({
        module: module.module,
        name: module.tool,
        code: 'NOT_PINNED',
        reason: module.reason,
      });
    }
    const document: PinJson = { ok: leftOut.length === 0, ...report, leftOut };
    io.stdout.write(
      args.json
        ? `${JSON.stringify(document, null, 2)}\n`
        : renderPins(document, styleFor(io.stdout, io.env)),
    );
    return document.ok ? ExitCode.ok : ExitCode.failed;
  } finally {
    await host.close();
  }
}

const MARKS: Record<PinChange['change'], string> = {
  added: '+',
  updated: '~',
  unchanged: '=',
  removed: '-',
};

function renderPins(document: PinJson, style: Style): string {
  const lines: string[] = [];
  for (const change of document.changes) {
    const where = change.package === null ? change.module : `${change.package} ${change.module}`;
    const what =
      change.change === 'added'
        ? style.green('pinned')
        : change.change === 'updated'
          ? style.yellow('pinned again, changed')
          : change.change === 'removed'
            ? style.dim('removed (the package no longer lists it)')
            : style.dim('unchanged');
    lines.push(`  ${MARKS[change.change]} ${style.bold(change.tool)}  ${style.dim(where)}  ${what}`);
    lines.push(...differenceLines(change.difference, '      '));
  }
  for (const entry of document.leftOut) {
    const label = entry.name === null ? entry.module : `${entry.name} (${entry.module})`;
    lines.push(
      `  ${style.red('✗')} ${label}  ${style.red('not pinned')}: ${entry.code}: ${oneLine(entry.reason)}`,
    );
  }
  const count = (kind: PinChange['change']) =>
    document.changes.filter((change) => change.change === kind).length;
  const pinned = count('added') + count('updated') + count('unchanged');
  const summary = `${pinned} ${pinned === 1 ? 'tool' : 'tools'} pinned in ${document.lockFile} (${count('added')} new, ${count('updated')} changed, ${count('unchanged')} unchanged${count('removed') > 0 ? `, ${count('removed')} removed` : ''})${document.leftOut.length > 0 ? `, ${document.leftOut.length} left out` : ''}`;
  return `${lines.join('\n')}${lines.length > 0 ? '\n\n' : ''}${summary}\n`;
}
