/**
 * `toolhost mcp-config <package>…`: client configurations that start this installation's
 * `toolhost serve` as written, from any folder: node's own path, the absolute path of the CLI
 * module and absolute package paths (a config that says `npx toolhost` fails wherever toolhost is
 * not on the registry or in the folder the client starts it from). For Claude Desktop
 * (`mcpServers`), Claude Code (`claude mcp add`) and VS Code (`.vscode/mcp.json`), over stdio and
 * over HTTP. A path may be an MCP client config (`mcpServers`): the printed config then runs those
 * servers through toolhost's sandbox, and stderr says which grants each gets; for a package that
 * asks for the network, stderr names the `--allow-network` that grants it. `--lock` is passed on.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readLockFile } from '../../lock/lock-file.js';
import { srcFile } from '../../own-files.js';
import type { McpConfigArgs } from '../args/command-line.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import type { CliIo } from '../ui/terminal.js';
import {
  type NetworkAskingPackage,
  networkAskingPackages,
  packageGrantLines,
} from './mcp-config-packages.js';
import { serverGrantLines, type WrappedServer, wrappedServers } from './mcp-config-servers.js';

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
  /** The MCP servers of each wrapped `mcpServers` config, with the grants each will run with. */
  servers: WrappedServer[];
  /** The packages that ask for the network, with the `--allow-network` that `serve` needs to grant it. */
  packages: NetworkAskingPackage[];
}

/** The CLI module of this installation (dist/src/cli/main.js). */
const CLI_MAIN = fileURLToPath(srcFile('cli/main.js'));

/** Builds the configurations; paths are made absolute against `cwd`. */
export async function mcpConfigs(args: McpConfigArgs, cwd: string): Promise<McpConfigJson> {
  const paths = args.paths.map((path) => resolve(cwd, path));
  for (const path of paths) {
    if (!existsSync(path)) throw new UsageError(messages.noSuchPath(path));
  }
  // A lock the printed command would refuse is refused now, not when the client starts it.
  if (args.lock !== undefined) readLockFile(args.lock);
  const lock = args.lock === undefined ? [] : ['--lock', args.lock];
  const servers = await wrappedServers(paths);
  const packages = await networkAskingPackages(paths);
  const host = args.http.host.includes(':') ? `[${args.http.host}]` : args.http.host;
  const url = `http://${host}:${args.http.port}/mcp`;
  const stdio: CommandLine = { command: process.execPath, args: [CLI_MAIN, 'serve', ...lock, ...paths] };
  const http: CommandLine = {
    command: process.execPath,
    args: [CLI_MAIN, 'serve', '--http', `${host}:${args.http.port}`, ...lock, ...paths],
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
    servers,
    packages,
  };
}

/**
 * Prints the configurations (text, or one JSON document with `--json`); for a wrapped `mcpServers`
 * config, stderr says which grants each server gets (`servers` in the JSON), and for a package that
 * asks for the network, the grant it must be served with (`packages`).
 */
export async function mcpConfigCommand(args: McpConfigArgs, io: CliIo): Promise<ExitCode> {
  const configs = await mcpConfigs(args, process.cwd());
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
  // Beside the configurations, not in them: each stays a JSON document to paste.
  const grants = [
    ...packageGrantLines(configs.packages, shellLine),
    ...serverGrantLines(configs.servers, args.lock),
  ];
  if (grants.length > 0) io.stderr.write(`${grants.join('\n')}\n`);
  return ExitCode.ok;
}

/** A command line a POSIX shell reads back as these words. */
function shellLine(words: readonly string[]): string {
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`))
    .join(' ');
}
