/**
 * `toolhost call <package-or-module> <tool> [json-args]`: one call, as a model's would run. The
 * tool's output goes to stdout as it is; everything beside it (what the tool printed, progress,
 * details, where a cut output was kept) goes to stderr. Exit 1 when the call ends in an error result.
 */
import { text as readText } from 'node:stream/consumers';
import type { ToolOutcome } from '../../boundary/outcome.js';
import type { CapturedLog } from '../../boundary/protocol.js';
import type { JsonValue } from '../../boundary/tool-contract.js';
import type { LoadReport } from '../../host/events.js';
import type { ToolHost } from '../../host/tool-host.js';
import type { CallArgs } from '../args/command-line.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { describeBlock } from '../ui/content-display.js';
import { messages, writeMessage } from '../ui/messages.js';
import { type CliIo, oneLine, type Style, styleFor } from '../ui/terminal.js';
import { createHost, loadAll } from './host-setup.js';

/** The `--json` document. */
export interface CallJson {
  tool: string;
  ok: boolean;
  outcome: ToolOutcome;
  /** What the tool printed (captured in its worker). */
  output: CapturedLog[];
  /** What the tool sent with `ctx.emit`, in order. */
  progress: JsonValue[];
}

export async function callCommand(args: CallArgs, io: CliIo, signal: AbortSignal): Promise<ExitCode> {
  const input = await readArguments(args.argsJson, io);
  const style = styleFor(io.stderr, io.env);
  const host = await createHost(args, io.stderr);
  try {
    const [report] = await loadAll(host, [{ shown: args.path, path: args.path }]);
    if (!host.list().some((info) => info.name === args.tool)) return notOffered(host, args, io, report);

    const heard = collectEvents(host, args, io, style);
    const outcome = await host.call(args.tool, input, {
      signal,
      ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
      ...(args.sessionId === undefined ? {} : { sessionId: args.sessionId }),
    });
    if (outcome.error?.code === 'CALL_ABORTED' && signal.aborted) {
      writeMessage(io.stderr, messages.callInterrupted());
      return ExitCode.interrupted;
    }
    if (outcome.error?.code === 'INVALID_INPUT') {
      throw new UsageError(messages.argumentsDontMatch(args.tool, validationErrors(outcome)));
    }
    if (args.json) {
      const document: CallJson = { tool: args.tool, ok: !outcome.isError, outcome, ...heard };
      io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    } else if (outcome.isError) writeFailure(args.tool, outcome, io, style);
    else writeAnswer(outcome, io, style);
    return outcome.isError ? ExitCode.failed : ExitCode.ok;
  } finally {
    await host.close();
  }
}

/** The tool asked for is not offered: left out (exit 1, with its reason), or unknown (a usage error). */
function notOffered(host: ToolHost, args: CallArgs, io: CliIo, report: LoadReport | undefined): ExitCode {
  const leftOut = host.status().find((status) => status.name === args.tool && status.state !== 'offered');
  if (leftOut !== undefined) {
    writeMessage(
      io.stderr,
      messages.toolLeftOut(args.tool, leftOut.code ?? 'LEFT_OUT', oneLine(leftOut.reason ?? '')),
    );
    return ExitCode.failed;
  }
  const names = (report?.modules ?? [])
    .flatMap((status) => (status.state === 'offered' && status.name !== undefined ? [status.name] : []))
    .sort();
  const leftOutCount = (report?.modules ?? []).filter((status) => status.state !== 'offered').length;
  throw new UsageError(messages.unknownTool(args.tool, args.path, names, leftOutCount));
}

/** Keeps what the tool printed and sent with `ctx.emit` (for `--json`), and shows it on stderr otherwise. */
function collectEvents(
  host: ToolHost,
  args: CallArgs,
  io: CliIo,
  style: Style,
): { output: CapturedLog[]; progress: JsonValue[] } {
  const output: CapturedLog[] = [];
  const progress: JsonValue[] = [];
  host.on('output', (event) => {
    output.push(...event.logs);
    if (!args.json) for (const log of event.logs) io.stderr.write(prefixLines(log.text, style.dim('│ ')));
  });
  host.on('progress', (event) => {
    progress.push(event.data);
    if (!args.json) io.stderr.write(`${style.dim(`progress: ${JSON.stringify(event.data)}`)}\n`);
  });
  return { output, progress };
}

/** An error result: one line naming the tool and the code, the tool's frames, the details. */
function writeFailure(tool: string, outcome: ToolOutcome, io: CliIo, style: Style): void {
  const code = outcome.error?.code ?? 'TOOL_ERROR_RESULT';
  const message =
    outcome.error?.message ??
    outcome.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
  writeMessage(io.stderr, messages.toolFailed(tool, code, oneLine(message)));
  // Where it failed, for the tool's author: the tool's own frames, relative to its package.
  if (outcome.error?.stack !== undefined) io.stderr.write(`${style.dim(outcome.error.stack)}\n`);
  writeDetails(outcome, io, style.dim);
}

/** A result: its blocks on stdout, each on its own line, and the details on stderr. */
function writeAnswer(outcome: ToolOutcome, io: CliIo, style: Style): void {
  for (const block of outcome.content) {
    const shown = block.type === 'text' ? block.text : describeBlock(block);
    io.stdout.write(shown.endsWith('\n') ? shown : `${shown}\n`);
  }
  writeDetails(outcome, io, style.dim);
}

/** The JSON arguments as typed, or read from stdin for `-`; a plain JSON object or a usage error. */
async function readArguments(argsJson: string, io: CliIo): Promise<Record<string, unknown>> {
  const source = argsJson === '-' ? await readText(io.stdin) : argsJson;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    throw new UsageError(messages.argumentsNotJson((error as Error).message));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new UsageError(messages.argumentsNotObject(kind));
  }
  return value as Record<string, unknown>;
}

function validationErrors(outcome: ToolOutcome): string {
  const lines = (outcome.error?.message ?? '').split('\n').slice(1);
  return lines.map((line) => line.replace(/^- /, '')).join('; ');
}

function writeDetails(outcome: ToolOutcome, io: CliIo, dim: (text: string) => string): void {
  if (outcome.details !== undefined)
    io.stderr.write(`${dim(`details: ${JSON.stringify(outcome.details)}`)}\n`);
  if (outcome.structuredContent !== undefined) {
    io.stderr.write(`${dim(`structured content: ${JSON.stringify(outcome.structuredContent)}`)}\n`);
  }
  if (outcome.fullOutputPath !== undefined) {
    io.stderr.write(`${dim(`the output was cut; all of it is in ${outcome.fullOutputPath}`)}\n`);
  }
}

function prefixLines(text: string, prefix: string): string {
  return `${text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n')}\n`;
}
