/**
 * The command line, parsed with `node:util` parseArgs into one typed command. Every mistake is a
 * {@link UsageError} with one sentence (from {@link messages}) that names the option as it was typed.
 */
import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { IsolationTier } from '../../calls/isolation.js';
import { DEFAULT_LOCK_FILE_NAME } from '../../lock/lock-file.js';
import { UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import {
  atLeastOnePath,
  isolationTier,
  lockPath,
  networkAllowance,
  nonEmpty,
  positiveIntegerOption,
  stringList,
  stringOption,
  type Values,
} from './option-values.js';
import { httpAddress, serveArgs } from './serve-args.js';

/**
 * The model `toolhost chat` asks for when neither --model nor ANTHROPIC_MODEL names one; the README
 * and the JSDoc examples use the same id (a test keeps them in step).
 */
export const DEFAULT_CHAT_MODEL = 'claude-sonnet-5';

export const COMMANDS = ['list', 'call', 'selftest', 'chat', 'serve', 'mcp-config', 'init', 'pin'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** Options every command that hosts tools takes. */
export interface HostArgs {
  json: boolean;
  /** `--allow-env NAME`: environment variables passed to tools. */
  allowEnv: string[];
  /** `--heap-mb`: heap limit of each tool worker. */
  heapMb: number | undefined;
  /** `--isolation`: the isolation tier (checked here, so a mistake names the flag). */
  isolation: IsolationTier | undefined;
  /** `--process-memory-mb`: the memory limit of each package's process (the process tier). */
  processMemoryMb: number | undefined;
  /** `--lock FILE`: offer only what this lock file pins (an absolute path). */
  lock: string | undefined;
  /** `--allow-network PACKAGE[=HOST,...]`: the host's `allowNetwork`, per package (none given: none). */
  allowNetwork: Record<string, true | string[]>;
}

export interface ListArgs extends HostArgs {
  command: 'list';
  paths: string[];
}

/** Commands that run tools for real keep what tools save (and cut outputs) in a dataDir. */
export interface DataDirArgs {
  /** `--data-dir`, else `TOOLHOST_DATA_DIR`, else the library's default (`<os tmpdir>/toolhost-data`). */
  dataDir: string | undefined;
}

export interface CallArgs extends HostArgs, DataDirArgs {
  command: 'call';
  path: string;
  tool: string;
  /** The JSON arguments as typed; `-` reads them from stdin. @default '{}' */
  argsJson: string;
  timeoutMs: number | undefined;
  sessionId: string | undefined;
}

export interface SelftestArgs extends HostArgs {
  command: 'selftest';
  paths: string[];
  timeoutMs: number | undefined;
  concurrency: number | undefined;
  requireSelftests: boolean;
}

export interface ChatArgs extends HostArgs, DataDirArgs {
  command: 'chat';
  toolPaths: string[];
  model: string | undefined;
  prompt: string;
  maxIterations: number | undefined;
  maxTokens: number | undefined;
  timeoutMs: number | undefined;
}

/** Where `serve --http` listens. */
export interface HttpAddress {
  /** As typed, without brackets around an IPv6 address. @default '127.0.0.1' */
  host: string;
  /** 0 asks the system for a free port (the bound address is printed on stderr). */
  port: number;
}

export interface ServeArgs extends HostArgs, DataDirArgs {
  command: 'serve';
  /** Packages or modules to serve, as typed. */
  paths: string[];
  /** `--watch DIR` (repeatable): folders of packages, served and watched. */
  watch: string[];
  /** `--http [host:]port`; stdio without it. */
  http: HttpAddress | undefined;
  /** The bearer token every HTTP request must carry, read from the variable `--token-env` names. */
  token: string | undefined;
  /** `--allow-origin ORIGIN` (repeatable): browser origins allowed to call the HTTP endpoint. */
  allowOrigins: string[];
  timeoutMs: number | undefined;
  /** `--concurrency N`: calls of one package running at once (its worker threads). */
  concurrency: number | undefined;
}

/** `toolhost pin`: the host options (its `lock` is the file written, never one enforced). */
export interface PinArgs extends HostArgs {
  command: 'pin';
  paths: string[];
  /** The lock file to write, absolute. @default toolhost.lock.json in the working directory */
  lock: string;
}

export interface McpConfigArgs {
  command: 'mcp-config';
  json: boolean;
  /** Packages or modules to serve, as typed (made absolute when printed). */
  paths: string[];
  /** `--name`: the server's name in the client's list. @default 'toolhost' */
  name: string;
  /** `--http`: the address of the HTTP configurations. @default 127.0.0.1:8765 */
  http: HttpAddress;
}

export interface InitArgs {
  command: 'init';
  json: boolean;
  /** The folder to create the package in, as typed. @default '.' */
  dir: string;
}

export type ParsedCommandLine =
  | ListArgs
  | CallArgs
  | SelftestArgs
  | ChatArgs
  | ServeArgs
  | McpConfigArgs
  | InitArgs
  | PinArgs
  | { command: 'help'; topic: CommandName | undefined }
  | { command: 'version' };

type Options = NonNullable<ParseArgsConfig['options']>;

const HOST_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  'allow-env': { type: 'string', multiple: true },
  'allow-network': { type: 'string', multiple: true },
  'heap-mb': { type: 'string' },
  isolation: { type: 'string' },
  'process-memory-mb': { type: 'string' },
  lock: { type: 'string' },
} satisfies Options;

const COMMAND_OPTIONS = {
  list: HOST_OPTIONS,
  call: {
    ...HOST_OPTIONS,
    'data-dir': { type: 'string' },
    timeout: { type: 'string' },
    session: { type: 'string' },
  },
  selftest: {
    ...HOST_OPTIONS,
    timeout: { type: 'string' },
    concurrency: { type: 'string' },
    'require-selftests': { type: 'boolean' },
  },
  chat: {
    ...HOST_OPTIONS,
    'data-dir': { type: 'string' },
    tools: { type: 'string', short: 't', multiple: true },
    model: { type: 'string', short: 'm' },
    'max-iterations': { type: 'string' },
    'max-tokens': { type: 'string' },
    timeout: { type: 'string' },
  },
  serve: {
    help: { type: 'boolean', short: 'h' },
    'allow-env': { type: 'string', multiple: true },
    'allow-network': { type: 'string', multiple: true },
    'heap-mb': { type: 'string' },
    isolation: { type: 'string' },
    'process-memory-mb': { type: 'string' },
    'data-dir': { type: 'string' },
    timeout: { type: 'string' },
    concurrency: { type: 'string' },
    watch: { type: 'string', multiple: true },
    http: { type: 'string' },
    'token-env': { type: 'string' },
    'allow-origin': { type: 'string', multiple: true },
    lock: { type: 'string' },
  },
  'mcp-config': {
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    name: { type: 'string' },
    http: { type: 'string' },
  },
  init: {
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  pin: HOST_OPTIONS,
} satisfies Record<CommandName, Options>;

/** Parses `argv` (without node and the script). `env` supplies `TOOLHOST_DATA_DIR`. */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ParsedCommandLine {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError(messages.noCommand());
  if (first === '--help' || first === '-h') return { command: 'help', topic: undefined };
  if (first === '--version') return { command: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { command: 'help', topic: undefined };
    return { command: 'help', topic: commandName(topic) };
  }
  const command = commandName(first);
  const { values, positionals, typed } = parseFor(command, rest);
  if (values['help'] === true) return { command: 'help', topic: command };
  const positiveInteger = (name: string) => positiveIntegerOption(values, name, typed(name));
  if (command === 'init') {
    const [dir, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(messages.initExtraArguments(extra));
    return { command, json: values['json'] === true, dir: dir ?? '.' };
  }
  if (command === 'mcp-config') {
    const httpValue = stringOption(values, 'http');
    return {
      command,
      json: values['json'] === true,
      paths: atLeastOnePath(command, positionals),
      name: stringOption(values, 'name') ?? 'toolhost',
      http:
        httpValue === undefined ? { host: '127.0.0.1', port: 8765 } : httpAddress(httpValue, typed('http')),
    };
  }

  const host: HostArgs = {
    json: values['json'] === true,
    allowEnv: stringList(values, 'allow-env'),
    heapMb: positiveInteger('heap-mb'),
    isolation: isolationTier(stringOption(values, 'isolation'), typed('isolation')),
    processMemoryMb: positiveInteger('process-memory-mb'),
    lock: lockPath(stringOption(values, 'lock')),
    allowNetwork: networkAllowance(stringList(values, 'allow-network')),
  };

  const dataDir = stringOption(values, 'data-dir') ?? nonEmpty(env['TOOLHOST_DATA_DIR']);
  switch (command) {
    case 'list':
      return { command, ...host, paths: atLeastOnePath(command, positionals) };
    case 'pin':
      return {
        command,
        ...host,
        paths: atLeastOnePath(command, positionals),
        lock: host.lock ?? resolve(DEFAULT_LOCK_FILE_NAME),
      };
    case 'call': {
      const [path, tool, argsJson, ...extra] = positionals;
      if (path === undefined || tool === undefined) throw new UsageError(messages.callArguments());
      if (extra.length > 0) throw new UsageError(messages.callExtraArguments(extra));
      return {
        command,
        ...host,
        dataDir,
        path,
        tool,
        argsJson: argsJson ?? '{}',
        timeoutMs: positiveInteger('timeout'),
        sessionId: stringOption(values, 'session'),
      };
    }
    case 'selftest':
      return {
        command,
        ...host,
        paths: atLeastOnePath(command, positionals),
        timeoutMs: positiveInteger('timeout'),
        concurrency: positiveInteger('concurrency'),
        requireSelftests: values['require-selftests'] === true,
      };
    case 'serve':
      return serveArgs(host, dataDir, positionals, values, typed, env);
    case 'chat': {
      const prompt = positionals.join(' ').trim();
      if (prompt === '') throw new UsageError(messages.chatPrompt());
      return {
        command,
        ...host,
        dataDir,
        toolPaths: stringList(values, 'tools'),
        model: stringOption(values, 'model'),
        prompt,
        maxIterations: positiveInteger('max-iterations'),
        maxTokens: positiveInteger('max-tokens'),
        timeoutMs: positiveInteger('timeout'),
      };
    }
  }
}

function commandName(word: string): CommandName {
  if ((COMMANDS as readonly string[]).includes(word)) return word as CommandName;
  if (word.startsWith('-')) throw new UsageError(messages.optionBeforeCommand(word));
  throw new UsageError(messages.unknownCommand(word));
}

export interface Parsed {
  values: Values;
  positionals: string[];
  /** How the user typed an option (`-m` or `--model`), for messages that name it. */
  typed(name: string): string;
}

/**
 * Parses leniently, then checks each option token itself: parseArgs' strict mode would do the same
 * checks, but in sentences of its own style ("Unknown option '--frob'. To specify ...").
 */
function parseFor(command: CommandName, args: string[]): Parsed {
  const options: Options = COMMAND_OPTIONS[command];
  const { values, positionals, tokens } = parseArgs({
    args,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const typedAs = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) throw new UsageError(messages.unknownOption(command, token.rawName));
    if (option.type === 'boolean' && token.value !== undefined) {
      throw new UsageError(messages.unexpectedValue(token.rawName, token.value));
    }
    if (option.type === 'string') {
      if (token.value === undefined) throw new UsageError(messages.missingValue(command, token.rawName));
      // `--model --json`: the next word is taken as the value only when it can't be an option.
      if (!token.inlineValue && /^-./.test(token.value)) {
        throw new UsageError(messages.optionLikeValue(token.rawName, token.value, token.name));
      }
    }
    typedAs.set(token.name, token.rawName);
  }
  return { values, positionals, typed: (name) => typedAs.get(name) ?? `--${name}` };
}
