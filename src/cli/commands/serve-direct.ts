/**
 * `toolhost serve` over stdio in one process: the host and the MCP server on stdin and stdout
 * directly, with no relay and no hosting process. Chosen only where no tool code can run in this
 * process (see {@link servesDirect}); docs/mcp.md ("Over stdio: direct or relayed") lists every way
 * a byte could reach stdout here, and what closes each.
 */
import type { Readable, Writable } from 'node:stream';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { DEFAULT_TIER } from '../../calls/isolation.js';
import { claimStdout, DirectStdioTransport } from '../../mcp/stdio-direct.js';
import { processTierHold } from '../../process/sandbox/process-tier.js';
import type { ServeArgs } from '../args/command-line.js';
import { ExitCode } from '../exit-codes.js';
import { messages, writeMessage } from '../ui/messages.js';
import type { CliIo } from '../ui/terminal.js';
import { startServing } from './serve-host.js';

/**
 * Whether this run serves stdio without the relay: every package it can host runs in the process
 * tier, each in processes of its own whose stdout is /dev/null, held there by a bubblewrap sandbox or
 * by Node's permission model. The command line names one tier for every package it loads or watches
 * (`--isolation`, else the default, `process`), and nothing else can choose one per package: no
 * manifest field, no config. Where the process tier holds nothing (neither sandbox nor permission
 * model), a package's process could open this process's stdout through `/proc/<ppid>/fd/1`: the
 * relay stays, and the hosting process behind it has /dev/null there.
 */
export async function servesDirect(args: ServeArgs): Promise<boolean> {
  if (args.http !== undefined) return false;
  if ((args.isolation ?? DEFAULT_TIER) !== 'process') return false;
  const hold = await processTierHold();
  // Node's permission model holds JavaScript only: a native addon (`--allow-addons`) runs code it
  // can't see, which could open this process's stdout. Only bubblewrap holds that.
  if (hold === 'permission-model') return args.allowAddons.length === 0;
  return hold === 'sandbox';
}

/** Runs serve over stdio in this process until stdin ends or `stop` aborts; resolves with the exit code. */
export async function serveDirect(args: ServeArgs, io: CliIo, stop: AbortSignal): Promise<ExitCode> {
  const stdin = io.stdin as Readable;
  const write = claimStdout(io.stdout as unknown as Writable, io.stderr as unknown as Writable);
  const ending = new AbortController();
  const end = () => ending.abort();
  stop.addEventListener('abort', end, { once: true });
  if (stop.aborted) end();
  try {
    // Reading starts now: a client that closes stdin while the tools load ends the run once they have.
    const transport = new DirectStdioTransport(stdin, write, end);
    // A mistake on the command line, found while loading, throws as for every command (exit 2).
    const served = await startServing(args, io.stderr, { listChanged: true, legacyLogScope: 'connection' });
    // The SDK's stdio entry decides the connection's era from its first message and makes one server
    // for it; it owns the transport.
    const connection = serveStdio((context) => served.tools.createServer(context), {
      transport,
      onerror: () => {},
    });
    writeMessage(io.stderr, messages.serving(served.host.list().length, 'on stdio'));
    if (!ending.signal.aborted) {
      await new Promise((resolve) => ending.signal.addEventListener('abort', resolve, { once: true }));
    }
    // Running calls answer `HOST_CLOSED`; their answers are handed to the transport in the
    // microtasks after they settled, and written one turn of the event loop later.
    await served.close();
    await new Promise((resolve) => setImmediate(resolve));
    await connection.close();
    return ExitCode.ok;
  } finally {
    stop.removeEventListener('abort', end);
    // Nothing more is read (after a clean end, or a mistake found while loading): stdin would keep
    // this process waiting.
    stdin.destroy();
  }
}
