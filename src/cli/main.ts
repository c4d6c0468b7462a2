#!/usr/bin/env node
/**
 * The `toolhost` command. Parses the command line, runs one command and sets the exit code:
 * 0 ok, 1 a tool or selftest failed, 2 a usage error (one line on stderr, no stack trace), 130
 * interrupted. The first Ctrl-C stops the command and lets it clean up (end workers, remove temp
 * dirs); a second one ends the process at once.
 */
import { asksForVersion } from './args/asks-for-version.js';
import type { ParsedCommandLine } from './args/command-line.js';
import { describeCliError, ExitCode } from './exit-codes.js';
import { packageVersion } from './package-version.js';
import { writeMessage } from './ui/messages.js';
import type { CliIo } from './ui/terminal.js';

async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const interrupt = new AbortController();
  const onSigint = () => {
    if (interrupt.signal.aborted) process.exit(ExitCode.interrupted);
    interrupt.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    // `--version` (what scripts run most often) is answered without loading the parser and the
    // flags' declarations, which it needs neither of.
    const parsed: ParsedCommandLine = asksForVersion(argv)
      ? { command: 'version' }
      : (await import('./args/args.js')).parseCommandLine(argv, io.env);
    if (parsed.command === 'help') {
      const { helpText } = await import('./args/help.js');
      io.stdout.write(helpText(parsed.topic));
      return ExitCode.ok;
    }
    if (parsed.command === 'version') {
      io.stdout.write(`${packageVersion()}\n`);
      return ExitCode.ok;
    }
    const { runCommand } = await import('./commands/run-command.js');
    return await runCommand(parsed, io, interrupt.signal);
  } catch (error) {
    const known = describeCliError(error);
    if (known === undefined) throw error;
    writeMessage(io.stderr, known.line);
    return known.exitCode;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

// A reader that goes away early (`toolhost selftest pkg | head -1`) is not an error worth a stack
// trace, nor a reason to stop: the run goes on to its end, so that it cleans up (its temp folders,
// its workers) and exits with its own code. What it writes after that goes nowhere: a stream that
// failed is destroyed, and drops later writes without another error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
