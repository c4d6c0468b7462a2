/**
 * The hosting process of `toolhost serve` over stdio (started by serve.ts, never by hand):
 * the ToolHost and the MCP server, speaking to the relay over fd 3. Its stdin and stdout are
 * /dev/null and its stderr the relay's, so nothing the tools write reaches the client's stdout.
 *
 * It ends on SIGTERM or SIGINT (the relay sends SIGTERM when the client closes stdin, once this
 * process said it hears it) and when the
 * channel closes (the relay died): running calls are answered, workers end, temp folders go.
 */
import { Socket } from 'node:net';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { ChannelServerTransport, HEARS_SIGNALS_METHOD } from '../../mcp/channel-transport.js';
import type { ServeArgs } from '../args/command-line.js';
import { describeCliError, ExitCode } from '../exit-codes.js';
import { messages, writeMessage } from '../ui/messages.js';
import { startServing } from './serve-host.js';

const CHANNEL_FD = 3;

async function main(): Promise<number> {
  // First of all: a client that closes stdin at once makes the relay send SIGTERM while this process
  // is still starting; heard from here on, it ends the server as any stop does. One that arrives
  // before this code runs still ends the process the default way, before it could say why.
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  process.once('SIGTERM', () => stop());
  process.once('SIGINT', () => stop());

  const socket = new Socket({ fd: CHANNEL_FD, readable: true, writable: true });
  const { settings, transport } = await ChannelServerTransport.open(socket);
  // Signed with the key just read, so no tool can say it; the relay holds a SIGTERM until it has.
  await transport.send({ jsonrpc: '2.0', method: HEARS_SIGNALS_METHOD });
  // The relay parsed and checked the command line; what it sent is that, as it is.
  const args = settings as ServeArgs;
  void transport.ended.then(() => stop());

  let served: Awaited<ReturnType<typeof startServing>>;
  try {
    served = await startServing(args, process.stderr, { listChanged: true, legacyLogScope: 'connection' });
  } catch (error) {
    const known = describeCliError(error);
    if (known === undefined) throw error;
    writeMessage(process.stderr, known.line);
    return known.exitCode;
  }
  // The SDK's stdio entry decides the connection's era from its first message (an `initialize`, or
  // a 2026-07-28 request with its `_meta`) and makes one server for it; it owns the transport.
  const connection = serveStdio((context) => served.tools.createServer(context), {
    transport,
    onerror: () => {},
  });
  writeMessage(process.stderr, messages.serving(served.host.list().length, 'on stdio'));

  await stopped;
  await served.close();
  // The last answers are handed to the transport in the microtasks after their calls settled; one
  // turn of the event loop later they are all written, and ending the socket flushes them.
  await new Promise((resolve) => setImmediate(resolve));
  if (socket.writable) await new Promise<void>((resolve) => socket.end(resolve));
  await connection.close();
  return ExitCode.ok;
}

const code = await main().catch((error: unknown) => {
  writeMessage(process.stderr, messages.hostError(error instanceof Error ? error.message : String(error)));
  return ExitCode.failed;
});
// A worker thread blocked in a system call could keep the process alive after close() resolved
// (see docs/limits.md); a server that was told to stop must stop.
process.exit(code);
