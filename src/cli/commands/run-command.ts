/** Runs a parsed command (chat is loaded only when asked for: it pulls in the API client). */
import type { ChatArgs, ParsedCommandLine } from '../args/args.js';
import type { ExitCode } from '../exit-codes.js';
import type { CliIo } from '../ui/terminal.js';
import { callCommand } from './call.js';
import { initCommand } from './init.js';
import { listCommand } from './list.js';
import { mcpConfigCommand } from './mcp-config.js';
import { selftestCommand } from './selftest.js';
import { serveCommand } from './serve.js';

export async function runCommand(
  parsed: Exclude<ParsedCommandLine, { command: 'help' } | { command: 'version' }>,
  io: CliIo,
  signal: AbortSignal,
): Promise<ExitCode> {
  switch (parsed.command) {
    case 'list':
      return listCommand(parsed, io);
    case 'call':
      return callCommand(parsed, io, signal);
    case 'selftest':
      return selftestCommand(parsed, io, signal);
    case 'chat':
      return chat(parsed, io, signal);
    case 'serve':
      return serveCommand(parsed, io, signal);
    case 'mcp-config':
      return mcpConfigCommand(parsed, io);
    case 'init':
      return initCommand(parsed, io);
  }
}

async function chat(args: ChatArgs, io: CliIo, signal: AbortSignal): Promise<ExitCode> {
  const { chatCommand } = await import('./chat.js');
  return chatCommand(args, io, signal);
}
