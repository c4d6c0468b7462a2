/**
 * Runs a parsed command. Each command's module is loaded only when that command runs: `toolhost
 * --version` or a usage error loads none of them, and only `chat` loads the API client, only `serve`
 * the MCP SDK.
 */
import type { ParsedCommandLine } from '../args/command-line.js';
import type { ExitCode } from '../exit-codes.js';
import type { CliIo } from '../ui/terminal.js';

export async function runCommand(
  parsed: Exclude<ParsedCommandLine, { command: 'help' } | { command: 'version' }>,
  io: CliIo,
  signal: AbortSignal,
): Promise<ExitCode> {
  switch (parsed.command) {
    case 'list':
      return (await import('./list.js')).listCommand(parsed, io);
    case 'call':
      return (await import('./call.js')).callCommand(parsed, io, signal);
    case 'selftest':
      return (await import('./selftest.js')).selftestCommand(parsed, io, signal);
    case 'chat':
      return (await import('./chat.js')).chatCommand(parsed, io, signal);
    case 'serve':
      return (await import('./serve.js')).serveCommand(parsed, io, signal);
    case 'mcp-config':
      return (await import('./mcp-config.js')).mcpConfigCommand(parsed, io);
    case 'init':
      return (await import('./init.js')).initCommand(parsed, io);
    case 'pin':
      return (await import('./pin.js')).pinCommand(parsed, io);
    case 'doctor':
      return (await import('./doctor.js')).doctorCommand(parsed, io);
  }
}
