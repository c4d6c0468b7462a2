/**
 * The text of `toolhost --help` and `toolhost <command> --help`: each command's usage and what it
 * does, written here, and its options, read off the flag declaration.
 */
import type { CommandName } from './command-names.js';
import { type Flag, flagsOf, helpFor, shownDefault } from './flags.js';

/** Where an option's help starts, and how wide a help line may get. */
const HELP_COLUMN = 25;
const HELP_WIDTH = 104;

const OVERVIEW = `toolhost: host untrusted LLM tools in worker threads with time and memory bounds

Usage:
  toolhost list <package-or-module>...            declarations: offered, or left out and why
  toolhost call <package-or-module> <tool> [json-args]
                                                  one call, as the model would make it
  toolhost selftest <package-or-module>...        selftests in temp dirs; exit 1 on any failure
  toolhost chat [--tools <package-or-module>]... [--model M] <prompt>
                                                  a conversation with Claude using the tools
                                                  (needs ANTHROPIC_API_KEY; honours ANTHROPIC_BASE_URL)
  toolhost serve [--http [host:]port] [--watch DIR]... <package-or-module>...
                                                  the tools as an MCP server (stdio by default)
  toolhost mcp-config [--name NAME] [--http [host:]port] [--lock FILE] <package-or-module>...
                                                  client configs for Claude Desktop, Claude Code, VS Code
                                                  (a servers.json wraps its MCP servers; stderr names
                                                  each one's grants)
  toolhost init [dir]                             a new tool package, with one tool that passes its selftest
  toolhost pin <package-or-module>... [--lock FILE]
                                                  record the reviewed declarations in a lock file
                                                  (default toolhost.lock.json); --lock FILE on list,
                                                  call, selftest, chat and serve offers only what it pins
  toolhost doctor                                 what each isolation tier can do on this machine, and
                                                  the exact fix for what is missing; exit 1 when the
                                                  default tier can't run at full strength

Every command takes --help, and all but serve take --json (serve's stdout is the protocol). Exit codes: 0 ok, 1 a tool or selftest failed,
2 usage error (bad arguments, a missing path, not a tool package, unknown tool, no API key,
a file init would overwrite). Messages go to stderr as one line: toolhost: <what happened>.

Run toolhost <command> --help for a command's options.
`;

const COMMAND_HELP: Record<CommandName, string> = {
  doctor: `Usage: toolhost doctor [options]

Says what each isolation tier can do on this machine, and for anything missing the exact fix:
bubblewrap and its trial sandbox, AppArmor's restriction on unprivileged user namespaces (Ubuntu
24.04 and later), user namespaces (also in containers), the memory cgroup (v2 delegated, or v1),
the Node.js release each tier needs, the snapshot store folder, and the egress proxy. Without
--isolation every command runs the default tier, the strongest here: the process tier, in
bubblewrap where it works, else under Node's permission model. Exit 1 when the default tier can't
run at full strength (on Linux: no bubblewrap sandbox).
`,
  pin: `Usage: toolhost pin <package-or-module>... [options]

Reads each tool module's declaration as toolhost list does, and records every offered tool in a
lock file: its package name and module path, its checked declaration (everything the model or a
client sees) with a digest of it, and a digest of the package version's content (what runs).
Entries of other packages stay; pinning again replaces the entries and prints what changed. The
file is plain sorted JSON, meant to be committed and reviewed in a diff. With --lock FILE, list,
call, selftest, chat and serve offer only what the lock pins. Exit 1 if a module is left out (it
is not pinned); 2 for a lock file that exists but is not one.
`,
  list: `Usage: toolhost list <package-or-module>... [options]

Reads each tool module's declaration in a throwaway worker and shows the offered tools (name,
parameters, description) and the modules left out, with the reason. Exit 1 if a module is left out.
`,
  call: `Usage: toolhost call <package-or-module> <tool> [json-args] [options]

Calls one tool in a worker, as the model would. json-args is a JSON object (default {}); "-" reads
it from stdin. The tool's output goes to stdout; what it printed, its progress and its details go
to stderr. Exit 1 if the call ends in an error result; 2 for bad JSON or arguments that don't
match the tool's parameterSchema.
`,
  selftest: `Usage: toolhost selftest <package-or-module>... [options]

Runs every offered tool's selftest in a worker with a fresh ctx.tmpDir (removed afterwards, also
when the selftest crashes or times out). Selftests run in an empty scratch working directory with
an empty dataDir; a file a selftest writes there, or in its package folder, or in the directory
toolhost was started in, fails it (detected by comparing before and after, not prevented).
A tool without a selftest shows as "no selftest", which is not a pass.

Exit 1 if a selftest failed, a module was left out, something was written outside the tmpDirs
or a tmpDir was left behind.
`,
  chat: `Usage: toolhost chat [--tools <package-or-module>]... [options] <prompt>

Sends the prompt to Claude with the tools of the given packages, runs the tools the model calls
(each in a worker) and streams the model's text as it arrives, with each tool call and its outcome.
Needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL is honoured. Exit 1 if the conversation fails.
`,
  serve: `Usage: toolhost serve [options] <package-or-module>...
       toolhost serve [options] --watch DIR [<package-or-module>...]

Serves the offered tools as a Model Context Protocol server; every call runs in a worker, as with
toolhost call. Over stdio (the default) stdout carries protocol messages only: the tools run in a
process of their own whose stdout is not the protocol's. Left-out modules, warnings and what tools
print go to stderr. --watch serves a folder of packages and tells the client when the offered tools
change (notifications/tools/list_changed). SIGINT, SIGTERM or stdin closing shut it down: running
calls are answered, workers end, temp folders are removed. Exit 0 after a clean shut-down, 2 for a
usage error, 1 if the tool host process ended unexpectedly.
`,
  'mcp-config': `Usage: toolhost mcp-config [options] <package-or-module>...

Prints MCP client configurations that start this installation's toolhost serve from any folder:
node's own path, the absolute path of the toolhost CLI and absolute package paths. For Claude
Desktop (mcpServers JSON), Claude Code (claude mcp add ...) and VS Code (.vscode/mcp.json), over
stdio (the client starts the server) and over HTTP (you start it; the command is printed).
A path may be an MCP client config ({ "mcpServers": ... }): the printed config runs its servers
through toolhost's sandbox, and stderr says which grants each server gets (--json: "servers").
`,
  init: `Usage: toolhost init [dir] [options]

Creates a tool package in dir (default: the current folder; created if missing): package.json
listing the tool, tools/count-words.js (one tool typed with defineTool, with a selftest),
jsconfig.json and a README. The tool imports nothing, so "toolhost selftest dir" passes at once,
with no npm install. init never overwrites a file: if one exists, it writes nothing and exits 2.
`,
};

/** The overview (no topic), or one command's usage, description and options. */
export function helpText(topic: CommandName | undefined): string {
  if (topic === undefined) return OVERVIEW;
  const options = flagsOf(topic).map((flag) => optionHelp(flag, topic));
  return `${COMMAND_HELP[topic]}\nOptions:\n${options.join('\n')}\n`;
}

/** `-t, --tools PATH`, `--heap-mb N`, `--json`: a flag as it is typed. */
export function flagSyntax(flag: Flag): string {
  const long = flag.value === undefined ? `--${flag.name}` : `--${flag.name} ${flag.value}`;
  return flag.short === undefined ? long : `-${flag.short}, ${long}`;
}

/** One option's lines: its syntax, then its help (with its default) wrapped at the help column. */
function optionHelp(flag: Flag, command: CommandName): string {
  const shown = shownDefault(flag, command);
  const text = shown === undefined ? helpFor(flag, command) : `${helpFor(flag, command)} (default ${shown})`;
  const syntax = `  ${flagSyntax(flag)}`;
  const lines = wrap(text, HELP_WIDTH - HELP_COLUMN);
  const indent = ' '.repeat(HELP_COLUMN);
  // A syntax too long for its column gets a line of its own, as `--allow-network PKG[=HOST,...]` does.
  const first = syntax.length < HELP_COLUMN - 1 ? syntax.padEnd(HELP_COLUMN) + lines.shift() : syntax;
  return [first, ...lines.map((line) => indent + line)].join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines;
}
