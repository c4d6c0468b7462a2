/** The text of `toolhost --help` and `toolhost <command> --help`. */
import { type CommandName, DEFAULT_CHAT_MODEL } from './args.js';

const HOST_OPTIONS = `  --json                 print one JSON document on stdout instead of text
  --allow-env NAME       pass this environment variable to tools (repeatable; tools get an empty environment otherwise)
  --heap-mb N            heap limit of each tool worker, in MB (default 128)
  --isolation TIER       isolation tier: worker (default), strict or process
  --process-memory-mb N  memory limit of each package's process with --isolation process (default 1024)
  --lock FILE            offer only the tools this lock file pins (see toolhost pin)
  --allow-network PKG[=HOST,...]
                         grant package PKG the network its manifest asks for, or only these hosts of it
                         (repeatable; held to its hosts with --isolation process in bubblewrap)
  -h, --help             show this help`;

const DATA_DIR_OPTION = `  --data-dir DIR         where tools keep data and cut outputs are saved
                         (default $TOOLHOST_DATA_DIR, else <os tmpdir>/toolhost-data)`;

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
  toolhost mcp-config [--name NAME] [--http [host:]port] <package-or-module>...
                                                  client configs for Claude Desktop, Claude Code, VS Code
  toolhost init [dir]                             a new tool package, with one tool that passes its selftest
  toolhost pin <package-or-module>... [--lock FILE]
                                                  record the reviewed declarations in a lock file
                                                  (default toolhost.lock.json); --lock FILE on list,
                                                  call, selftest, chat and serve offers only what it pins

Every command takes --help, and all but serve take --json (serve's stdout is the protocol). Exit codes: 0 ok, 1 a tool or selftest failed,
2 usage error (bad arguments, a missing path, not a tool package, unknown tool, no API key,
a file init would overwrite). Messages go to stderr as one line: toolhost: <what happened>.

Run toolhost <command> --help for a command's options.
`;

const COMMAND_HELP: Record<CommandName, string> = {
  pin: `Usage: toolhost pin <package-or-module>... [options]

Reads each tool module's declaration as toolhost list does, and records every offered tool in a
lock file: its package name and module path, its checked declaration (everything the model or a
client sees) with a digest of it, and a digest of the package version's content (what runs).
Entries of other packages stay; pinning again replaces the entries and prints what changed. The
file is plain sorted JSON, meant to be committed and reviewed in a diff. With --lock FILE, list,
call, selftest, chat and serve offer only what the lock pins. Exit 1 if a module is left out (it
is not pinned); 2 for a lock file that exists but is not one.

Options:
  --lock FILE            the lock file to write (default toolhost.lock.json in the current folder)
  --json                 print one JSON document on stdout instead of text
  --allow-env NAME       pass this environment variable to tools (repeatable)
  --heap-mb N            heap limit of each tool worker, in MB (default 128)
  --isolation TIER       isolation tier: worker (default), strict or process
  --process-memory-mb N  memory limit of each package's process with --isolation process (default 1024)
  -h, --help             show this help
`,
  list: `Usage: toolhost list <package-or-module>... [options]

Reads each tool module's declaration in a throwaway worker and shows the offered tools (name,
parameters, description) and the modules left out, with the reason. Exit 1 if a module is left out.

Options:
${HOST_OPTIONS}
`,
  call: `Usage: toolhost call <package-or-module> <tool> [json-args] [options]

Calls one tool in a worker, as the model would. json-args is a JSON object (default {}); "-" reads
it from stdin. The tool's output goes to stdout; what it printed, its progress and its details go
to stderr. Exit 1 if the call ends in an error result; 2 for bad JSON or arguments that don't
match the tool's parameterSchema.

Options:
  --timeout MS           cap the tool's own timeoutMs
  --session ID           the ctx.sessionId the tool sees (default "default")
${DATA_DIR_OPTION}
${HOST_OPTIONS}
`,
  selftest: `Usage: toolhost selftest <package-or-module>... [options]

Runs every offered tool's selftest in a worker with a fresh ctx.tmpDir (removed afterwards, also
when the selftest crashes or times out). Selftests run in an empty scratch working directory with
an empty dataDir; a file a selftest writes there, or in its package folder, or in the directory
toolhost was started in, fails it (detected by comparing before and after, not prevented).
A tool without a selftest shows as "no selftest", which is not a pass.

Exit 1 if a selftest failed, a module was left out, something was written outside the tmpDirs
or a tmpDir was left behind.

Options:
  --timeout MS           cap each selftest's time (the tool's own timeoutMs applies too)
  --concurrency N        selftests running at once (default: the number of CPUs)
  --require-selftests    also fail for a tool without a selftest
${HOST_OPTIONS}
`,
  chat: `Usage: toolhost chat [--tools <package-or-module>]... [options] <prompt>

Sends the prompt to Claude with the tools of the given packages, runs the tools the model calls
(each in a worker) and streams the model's text as it arrives, with each tool call and its outcome.
Needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL is honoured. Exit 1 if the conversation fails.

Options:
  -t, --tools PATH       a tool package or module (repeatable)
  -m, --model M          the model (default $ANTHROPIC_MODEL, else ${DEFAULT_CHAT_MODEL})
  --max-iterations N     requests at most (default 10)
  --max-tokens N         max_tokens of each request (default 4096)
  --timeout MS           cap each tool call's time
${DATA_DIR_OPTION}
${HOST_OPTIONS}
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

Options:
  --http [HOST:]PORT     serve Streamable HTTP at http://HOST:PORT/mcp instead (stateless; HOST
                         default 127.0.0.1; port 0 picks a free one; the address goes to stderr)
  --token-env NAME       with --http: every request must carry Authorization: Bearer <$NAME>
  --allow-origin ORIGIN  with --http: a browser origin allowed to call (repeatable; requests with
                         any other Origin header are refused)
  --watch DIR            serve and watch a folder of tool packages (repeatable)
  --timeout MS           cap each call's time (the tool's own timeoutMs applies too)
  --concurrency N        calls of one package running at once (default: the number of CPUs)
${DATA_DIR_OPTION}
  --allow-env NAME       pass this environment variable to tools (repeatable; tools get an empty environment otherwise)
  --heap-mb N            heap limit of each tool worker, in MB (default 128)
  --isolation TIER       isolation tier: worker (default), strict or process
  --process-memory-mb N  memory limit of each package's process with --isolation process (default 1024)
  --lock FILE            serve only the tools this lock file pins; a changed package is withheld (with
                         --watch too) until it is pinned again, and stderr says why
  --allow-network PKG[=HOST,...]
                         grant package PKG the network its manifest asks for, or only these hosts of it
                         (repeatable; held to its hosts with --isolation process in bubblewrap)
  -h, --help             show this help
`,
  'mcp-config': `Usage: toolhost mcp-config [options] <package-or-module>...

Prints MCP client configurations that start this installation's toolhost serve from any folder:
node's own path, the absolute path of the toolhost CLI and absolute package paths. For Claude
Desktop (mcpServers JSON), Claude Code (claude mcp add ...) and VS Code (.vscode/mcp.json), over
stdio (the client starts the server) and over HTTP (you start it; the command is printed).

Options:
  --name NAME            the server's name in the client (default toolhost)
  --http [HOST:]PORT     the address of the HTTP configurations (default 127.0.0.1:8765)
  --json                 print one JSON document on stdout instead of text
  -h, --help             show this help
`,
  init: `Usage: toolhost init [dir] [options]

Creates a tool package in dir (default: the current folder; created if missing): package.json
listing the tool, tools/count-words.js (one tool typed with defineTool, with a selftest),
jsconfig.json and a README. The tool imports nothing, so "toolhost selftest dir" passes at once,
with no npm install. init never overwrites a file: if one exists, it writes nothing and exits 2.

Options:
  --json                 print one JSON document on stdout instead of text
  -h, --help             show this help
`,
};

export function helpText(topic: CommandName | undefined): string {
  return topic === undefined ? OVERVIEW : COMMAND_HELP[topic];
}
