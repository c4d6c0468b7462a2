/**
 * `toolhost serve`: the offered tools as an MCP server, until SIGINT, SIGTERM or (over stdio) the
 * client closing stdin. Over stdio, where every package runs in the process tier (no tool code in
 * this process), the server speaks on stdin and stdout itself (serve-direct.ts); otherwise the tools
 * run in a hosting process of their own behind a relay (see src/mcp/stdio-relay.ts), so that this
 * process's stdout carries protocol messages only. Over HTTP they run here, and stdout carries
 * nothing toolhost writes.
 *
 * Exit codes: 0 after a clean shut-down, 2 for a usage error (also one found while loading), 1 when
 * the hosting process ended unexpectedly.
 */
import type { Readable, Writable } from 'node:stream';
import { isLoopback } from '../../mcp/http-checks.js';
import { listenHttp } from '../../mcp/http-server.js';
import { StdioRelay } from '../../mcp/stdio-relay.js';
import { srcFile } from '../../own-files.js';
import type { ServeArgs } from '../args/command-line.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { messages, writeMessage } from '../ui/messages.js';
import type { CliIo } from '../ui/terminal.js';
import { serveDirect, servesDirect } from './serve-direct.js';
import { startServing } from './serve-host.js';

/** Runs `toolhost serve` until it is told to stop; resolves with the exit code. */
export async function serveCommand(args: ServeArgs, io: CliIo, signal: AbortSignal): Promise<ExitCode> {
  const stop = new AbortController();
  const onStop = () => stop.abort();
  signal.addEventListener('abort', onStop, { once: true });
  process.on('SIGTERM', onStop);
  try {
    if (args.http !== undefined) return await overHttp(args, io, stop.signal);
    return (await servesDirect(args))
      ? await serveDirect(args, io, stop.signal)
      : await overStdio(args, io, stop.signal);
  } finally {
    signal.removeEventListener('abort', onStop);
    process.off('SIGTERM', onStop);
  }
}

async function overStdio(args: ServeArgs, io: CliIo, stop: AbortSignal): Promise<ExitCode> {
  let reported = false;
  const relay = new StdioRelay({
    entry: srcFile('cli/commands/serve-child.js'),
    settings: args,
    stdin: io.stdin as Readable,
    stdout: io.stdout as unknown as Writable,
    onDropped: (bytes) => {
      if (reported) return;
      reported = true;
      writeMessage(io.stderr, messages.channelDropped(bytes));
    },
  });
  stop.addEventListener('abort', () => void relay.stop(), { once: true });
  const end = await relay.ended;
  // The hosting process is gone; stdin would keep this one waiting for input nobody reads.
  (io.stdin as Readable).destroy();
  if (end.code === ExitCode.ok || end.code === ExitCode.usage) return end.code;
  if (end.requested && end.signal === 'SIGTERM') return ExitCode.ok;
  writeMessage(io.stderr, messages.hostProcessEnded(end.signal ?? `exit code ${end.code}`));
  return ExitCode.failed;
}

async function overHttp(args: ServeArgs, io: CliIo, stop: AbortSignal): Promise<ExitCode> {
  const address = args.http ?? { host: '127.0.0.1', port: 0 };
  const served = await startServing(args, io.stderr, { listChanged: false, legacyLogScope: 'endpoint' });
  let endpoint: Awaited<ReturnType<typeof listenHttp>>;
  try {
    endpoint = await listenHttp({
      host: address.host,
      port: address.port,
      token: args.token,
      allowedOrigins: args.allowOrigins,
      createServer: (context) => served.tools.createServer(context),
      onToolsChanged: (notify) => served.tools.onOfferedChange(notify),
      legacyLogsWanted: () => served.tools.legacyLogsWanted(),
      plainCalls: served.tools.plainCalls(),
    });
  } catch (error) {
    await served.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(messages.listenFailed(`${address.host}:${address.port}`, reason));
  }
  if (args.token === undefined && !isLoopback(address.host)) {
    writeMessage(io.stderr, messages.noTokenBeyondLoopback(`${address.host}:${address.port}`));
  }
  writeMessage(io.stderr, messages.serving(served.host.list().length, `at ${endpoint.url}`));
  if (!stop.aborted) await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
  endpoint.stopAccepting();
  await served.close();
  await endpoint.close();
  return ExitCode.ok;
}
