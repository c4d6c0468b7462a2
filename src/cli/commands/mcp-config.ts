/**
 * `toolhost mcp-config <package>…`: client configurations that start this installation's
 * `toolhost serve` as written, from any folder: node's own path, the absolute path of the CLI
 * module and absolute package paths (a config that says `npx toolhost` fails wherever toolhost is
 * not on the registry or in the folder the client starts it from). For Claude Desktop
 * (`mcpServers`), Claude Code (`claude mcp add`) and VS Code (`.vscode/mcp.json`), over stdio and
 * over HTTP.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { srcFile } from '../../own-files.js';
import type { McpConfigArgs } from '../args/command-line.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import type { CliIo } from '../ui/terminal.js';

/** A command line: the program and its arguments. */
export interface CommandLine {
  command: string;
  args: string[];
}

/** What `mcp-config --json` prints. */
export interface McpConfigJson {
  name: string;
  stdio: {
    /** The command a client runs. */
    serve: CommandLine;
    claudeDesktop: { mcpServers: Record<string, CommandLine> };
    claudeCode: string[];
    vscode: { servers: Record<string, { type: 'stdio' } & CommandLine> };
  };
  http: {
    /** The command that starts the server (the operator runs it, not the client). */
    serve: CommandLine;
    url: string;
    claudeCode: string[];
    vscode: { servers: Record<string, { type: 'http'; url: string }> };
  };
}

/** The CLI module of this installation (dist/src/cli/main.js). */
const CLI_MAIN = fileURLToPath(srcFile('cli/main.js'));

/** Builds the configurations; paths are made absolute against `cwd`. */
export function mcpConfigs(args: McpConfigArgs, cwd: string): McpConfigJson {
  const paths = args.paths.map((path) => resolve(cwd, path));
  for (const path of paths) {
    if (!existsSync(path)) throw new UsageError(messages.noSuchPath(path));
  }
  const host = args.http.host.includes(':') ? `[${args.http.host}]` : args.http.host;
  const url = `http://${host}:${args.http.port}/mcp`;
  const stdio: CommandLine = { command: process.execPath, args: [CLI_MAIN, 'serve', ...paths] };
  const http: CommandLine = {
    command: process.execPath,
    args: [CLI_MAIN, 'serve', '--http', `${host}:${args.http.port}`, ...paths],
  };
  return {
    name: args.name,
    stdio: {
      serve: stdio,
      claudeDesktop: { mcpServers: { [args.name]: stdio } },
      claudeCode: ['claude', 'mcp', 'add', args.name, '--', stdio.command, ...stdio.args],
      vscode: { servers: { [args.name]: { type: 'stdio', ...stdio } } },
    },
    http: {
      serve: http,
      url,
      claudeCode: ['claude', 'mcp', 'add', '--transport', 'http', args.name, url],
      vscode: { servers: { [args.name]: { type: 'http', url } } },
    },
  };
}

/** Prints the configurations (text, or one JSON document with `--json`). */
export function mcpConfigCommand(args: McpConfigArgs, io: CliIo): ExitCode {
  const configs = mcpConfigs(args, process.cwd());
  if (args.json) {
    io.stdout.write(`${JSON.stringify(configs, null, 2)}\n`);
    return ExitCode.ok;
  }
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  io.stdout.write(
    [
      `# stdio: the client starts the server itself`,
      ``,
      `## Claude Desktop (claude_desktop_config.json)`,
      json(configs.stdio.claudeDesktop),
      ``,
      `## Claude Code`,
      shellLine(configs.stdio.claudeCode),
      ``,
      `## VS Code (.vscode/mcp.json)`,
      json(configs.stdio.vscode),
      ``,
      `# HTTP: start the server yourself, then point the client at ${configs.http.url}`,
      shellLine([configs.http.serve.command, ...configs.http.serve.args]),
      ``,
      `## Claude Code`,
      shellLine(configs.http.claudeCode),
      ``,
      `## VS Code (.vscode/mcp.json)`,
      json(configs.http.vscode),
      ``,
    ].join('\n'),
  );
  return ExitCode.ok;
}

/** A command line a POSIX shell reads back as these words. */
function shellLine(words: readonly string[]): string {
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`))
    .join(' ');
}
