/**
 * Every flag of `toolhost`, declared once: the argument parser, each command's help, docs/cli.md's
 * option table and the options a command hands to its ToolHost (serve's too, in its own process)
 * are all read off this list, so a flag can't be taken by the parser yet missing from the help, or
 * documented for a command that refuses it.
 */
import { COMMANDS, type CommandName } from './command-names.js';
import type { Flag } from './flag.js';

export type { Flag, FlagKind } from './flag.js';

/** The commands that host tools, and so take the host's options. */
const HOSTING = [
  'list',
  'call',
  'selftest',
  'chat',
  'serve',
  'pin',
] as const satisfies readonly CommandName[];

/**
 * The model `toolhost chat` asks for when neither --model nor ANTHROPIC_MODEL names one; the README, docs/
 * and the JSDoc examples use the same id (a test keeps them in step).
 */
export const DEFAULT_CHAT_MODEL = 'claude-sonnet-5';

/** In the order each command's help lists them: the command's own first, the host's after. */
export const FLAGS: readonly Flag[] = [
  {
    name: 'http',
    kind: 'address',
    value: '[HOST:]PORT',
    field: 'http',
    commands: ['serve', 'mcp-config'],
    help: 'serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (stateless; HOST default 127.0.0.1; port 0 picks a free one; the address goes to stderr)',
    helpIn: { 'mcp-config': 'the address of the HTTP configurations' },
    fallbackIn: { 'mcp-config': '127.0.0.1:8765' },
  },
  {
    name: 'token-env',
    kind: 'text',
    value: 'NAME',
    commands: ['serve'],
    help: 'with --http: every request must carry Authorization: Bearer <$NAME>',
  },
  {
    name: 'allow-origin',
    kind: 'texts',
    value: 'ORIGIN',
    field: 'allowOrigins',
    commands: ['serve'],
    help: 'with --http: a browser origin allowed to call (repeatable; requests with any other Origin header are refused)',
  },
  {
    name: 'watch',
    kind: 'texts',
    value: 'DIR',
    field: 'watch',
    commands: ['serve'],
    help: 'serve and watch a folder of tool packages (repeatable)',
  },
  {
    name: 'tools',
    short: 't',
    kind: 'texts',
    value: 'PATH',
    field: 'toolPaths',
    commands: ['chat'],
    help: 'a tool package or module (repeatable)',
  },
  {
    name: 'model',
    short: 'm',
    kind: 'text',
    value: 'M',
    field: 'model',
    commands: ['chat'],
    help: 'the model',
    default: `$ANTHROPIC_MODEL, else ${DEFAULT_CHAT_MODEL}`,
  },
  {
    name: 'max-iterations',
    kind: 'count',
    value: 'N',
    field: 'maxIterations',
    commands: ['chat'],
    help: 'requests at most',
    default: '10',
  },
  {
    name: 'max-tokens',
    kind: 'count',
    value: 'N',
    field: 'maxTokens',
    commands: ['chat'],
    help: 'max_tokens of each request',
    default: '4096',
  },
  {
    name: 'timeout',
    kind: 'count',
    value: 'MS',
    field: 'timeoutMs',
    commands: ['call', 'selftest', 'chat', 'serve'],
    help: "cap each call or selftest (the tool's own timeoutMs applies too)",
    helpIn: {
      call: "cap the tool's own timeoutMs",
      selftest: "cap each selftest's time (the tool's own timeoutMs applies too)",
      chat: "cap each tool call's time",
      serve: "cap each call's time (the tool's own timeoutMs applies too)",
    },
    serveOption: 'callTimeoutMs',
  },
  {
    name: 'session',
    kind: 'text',
    value: 'ID',
    field: 'sessionId',
    commands: ['call'],
    help: 'the ctx.sessionId the tool sees',
    default: '"default"',
  },
  {
    name: 'jobs',
    kind: 'count',
    value: 'N',
    field: 'jobs',
    commands: ['selftest'],
    help: 'selftests running at once',
    default: 'one per CPU',
    renamedFrom: 'concurrency',
  },
  {
    name: 'threads',
    kind: 'count',
    value: 'N',
    field: 'threads',
    commands: ['serve'],
    help: 'calls of one package running at once: its worker threads (its processes with --isolation process)',
    default: 'one per CPU',
    hostOption: 'maxThreadsPerPool',
    renamedFrom: 'concurrency',
  },
  {
    name: 'require-selftests',
    kind: 'switch',
    field: 'requireSelftests',
    commands: ['selftest'],
    help: 'also fail for a tool without a selftest',
    manual: '(`NO_SELFTEST` in its row and the counts)',
  },
  {
    name: 'name',
    kind: 'text',
    value: 'NAME',
    field: 'name',
    commands: ['mcp-config'],
    help: "the server's name in the client",
    fallbackIn: { 'mcp-config': 'toolhost' },
  },
  {
    name: 'data-dir',
    kind: 'text',
    value: 'DIR',
    field: 'dataDir',
    commands: ['call', 'chat', 'serve'],
    help: 'where tools keep data and cut outputs are saved',
    default: '$TOOLHOST_DATA_DIR, else <os tmpdir>/toolhost-data',
    env: 'TOOLHOST_DATA_DIR',
    hostOption: 'dataDir',
  },
  {
    name: 'json',
    kind: 'switch',
    field: 'json',
    commands: COMMANDS.filter((command) => command !== 'serve'),
    help: 'print one JSON document on stdout instead of text',
  },
  {
    name: 'lock',
    kind: 'file',
    value: 'FILE',
    field: 'lock',
    commands: [...HOSTING, 'mcp-config'],
    help: 'offer only the tools this lock file pins (see toolhost pin)',
    helpIn: {
      'mcp-config': 'the lock file the printed serve commands enforce (see toolhost pin)',
      serve:
        'serve only the tools this lock file pins; a changed package is withheld (with --watch too) until it is pinned again, and stderr says why',
      pin: 'the lock file to write (default toolhost.lock.json in the current folder)',
    },
    manual:
      "(a tool it doesn't match is left out with its code, and `list` shows the difference); for `pin`, the file to write (default `toolhost.lock.json` in the working directory); for `mcp-config`, passed on to the printed `serve` commands. A lock file that is missing, malformed or of another format is a usage error (exit 2)",
    hostOption: 'lockFile',
  },
  {
    name: 'allow-addons',
    kind: 'texts',
    value: 'PKG',
    field: 'allowAddons',
    commands: HOSTING,
    help: 'let package PKG load native addons in every tier (repeatable; by default only the process tier in bubblewrap allows them)',
    manual: '(`allowAddons` as a list of package names)',
    hostOption: 'allowAddons',
  },
  {
    name: 'allow-env',
    kind: 'texts',
    value: 'NAME',
    field: 'allowEnv',
    commands: HOSTING,
    help: 'pass this environment variable to tools (repeatable; tools get an empty environment otherwise)',
    hostOption: 'envAllowList',
  },
  {
    name: 'heap-mb',
    kind: 'count',
    value: 'N',
    field: 'heapMb',
    commands: HOSTING,
    help: 'heap limit of each tool worker, in MB',
    default: '128',
    hostOption: 'callHeapMb',
  },
  {
    name: 'isolation',
    kind: 'tier',
    value: 'TIER',
    field: 'isolation',
    commands: HOSTING,
    help: 'isolation tier: worker, strict or process (default: the strongest this machine has, said on stderr)',
    manual:
      '(`toolhost: isolation: process, the strongest here: …`; `toolhost doctor` says what each tier can do here); what `process` lacks on this machine (no bubblewrap, no cgroup) is said once on stderr (`toolhost: note: process isolation here runs without …`)',
    hostOption: 'isolation',
  },
  {
    name: 'process-memory-mb',
    kind: 'count',
    value: 'N',
    field: 'processMemoryMb',
    commands: HOSTING,
    help: 'memory limit of each package process with --isolation process, in MB',
    default: '1024',
    hostOption: 'processMemoryMb',
  },
  {
    name: 'allow-network',
    kind: 'grants',
    value: 'PKG[=HOST,...]',
    field: 'allowNetwork',
    commands: HOSTING,
    help: 'grant package PKG the network its manifest asks for, or only these hosts of it (repeatable; held to its hosts with --isolation process in bubblewrap)',
    manual: '(`allowNetwork` as an object)',
    hostOption: 'allowNetwork',
  },
  {
    name: 'secret',
    kind: 'secrets',
    value: 'NAME[=VAR]',
    field: 'secrets',
    commands: HOSTING,
    help: 'grant secret NAME the value of environment variable NAME (or VAR) for packages that bind it to hosts; their tools see only a placeholder (repeatable; --isolation process)',
    manual: '(`secrets`; see docs/secrets.md)',
    hostOption: 'secrets',
  },
  {
    name: 'help',
    short: 'h',
    kind: 'switch',
    commands: COMMANDS,
    help: 'show this help',
  },
];

/** The flags `command` takes, in the help's order. */
export function flagsOf(command: CommandName): Flag[] {
  return FLAGS.filter((flag) => flag.commands.includes(command));
}

/** The flag `command` takes by this long name (parseArgs gives a known short one as its long), if any. */
export function findFlag(command: CommandName, name: string): Flag | undefined {
  return flagsOf(command).find((flag) => flag.name === name);
}

/** What the flag's help line says in `command`. */
export function helpFor(flag: Flag, command: CommandName): string {
  return flag.helpIn?.[command] ?? flag.help;
}

/** The default in `command` as the help shows it, if there is one to show. */
export function shownDefault(flag: Flag, command: CommandName): string | undefined {
  return flag.default ?? flag.fallbackIn?.[command];
}

/**
 * The options a parsed command line sets through its flags: per flag of `command` that names one in
 * `target` (`hostOption`, `serveOption`), the field's value, when it has one.
 */
export function optionsSetBy(
  command: CommandName,
  args: object,
  target: 'hostOption' | 'serveOption',
): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  const fields = args as Record<string, unknown>;
  for (const flag of flagsOf(command)) {
    const option = flag[target];
    if (option === undefined || flag.field === undefined) continue;
    const value = fields[flag.field];
    if (value !== undefined) options[option] = value;
  }
  return options;
}
