/**
 * The command line, parsed with `node:util` parseArgs into one typed command. Every mistake is a
 * {@link UsageError} with one sentence that names the option or argument.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './exit-codes.js';

/** The model when neither --model nor ANTHROPIC_MODEL names one. */
export const DEFAULT_CHAT_MODEL = 'claude-sonnet-5-5';

export const COMMANDS = ['list', 'call', 'selftest', 'chat'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** Options every command that hosts tools takes. */
export interface HostArgs {
  json: boolean;
  /** `--allow-env NAME`: environment variables passed to tools. */
  allowEnv: string[];
  /** `--heap-mb`: heap limit of each tool worker. */
  heapMb: number | undefined;
  /** `--isolation`: the isolation tier, checked by the host. */
  isolation: string | undefined;
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

export type ParsedCommandLine =
  | ListArgs
  | CallArgs
  | SelftestArgs
  | ChatArgs
  | { command: 'help'; topic: CommandName | undefined }
  | { command: 'version' };

type Options = NonNullable<ParseArgsConfig['options']>;

const HOST_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  'allow-env': { type: 'string', multiple: true },
  'heap-mb': { type: 'string' },
  isolation: { type: 'string' },
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
} satisfies Record<CommandName, Options>;

/** Parses `argv` (without node and the script). `env` supplies `TOOLHOST_DATA_DIR`. */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ParsedCommandLine {
  const [first, ...rest] = argv;
  if (first === undefined)
    throw new UsageError('expected a command: list, call, selftest or chat (see toolhost --help)');
  if (first === '--help' || first === '-h') return { command: 'help', topic: undefined };
  if (first === '--version') return { command: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { command: 'help', topic: undefined };
    return { command: 'help', topic: commandName(topic) };
  }
  const command = commandName(first);
  const { values, positionals } = parseFor(command, rest);
  if (values['help'] === true) return { command: 'help', topic: command };

  const host: HostArgs = {
    json: values['json'] === true,
    allowEnv: stringList(values, 'allow-env'),
    heapMb: positiveInteger(values, 'heap-mb'),
    isolation: stringOption(values, 'isolation'),
  };

  const dataDir = stringOption(values, 'data-dir') ?? nonEmpty(env['TOOLHOST_DATA_DIR']);
  switch (command) {
    case 'list':
      return { command, ...host, paths: atLeastOnePath(command, positionals) };
    case 'call': {
      const [path, tool, argsJson, ...extra] = positionals;
      if (path === undefined || tool === undefined) {
        throw new UsageError(
          'call expects a package or module path and a tool name (see toolhost call --help)',
        );
      }
      if (extra.length > 0) {
        throw new UsageError(
          `call takes one JSON argument object, got extra arguments: ${extra.join(' ')} (quote the JSON)`,
        );
      }
      return {
        command,
        ...host,
        dataDir,
        path,
        tool,
        argsJson: argsJson ?? '{}',
        timeoutMs: positiveInteger(values, 'timeout'),
        sessionId: stringOption(values, 'session'),
      };
    }
    case 'selftest':
      return {
        command,
        ...host,
        paths: atLeastOnePath(command, positionals),
        timeoutMs: positiveInteger(values, 'timeout'),
        concurrency: positiveInteger(values, 'concurrency'),
        requireSelftests: values['require-selftests'] === true,
      };
    case 'chat': {
      const prompt = positionals.join(' ').trim();
      if (prompt === '') throw new UsageError('chat expects a prompt (see toolhost chat --help)');
      return {
        command,
        ...host,
        dataDir,
        toolPaths: stringList(values, 'tools'),
        model: stringOption(values, 'model'),
        prompt,
        maxIterations: positiveInteger(values, 'max-iterations'),
        maxTokens: positiveInteger(values, 'max-tokens'),
        timeoutMs: positiveInteger(values, 'timeout'),
      };
    }
  }
}

function commandName(word: string): CommandName {
  if ((COMMANDS as readonly string[]).includes(word)) return word as CommandName;
  if (word.startsWith('-')) {
    throw new UsageError(
      `expected a command before ${word}: list, call, selftest or chat (see toolhost --help)`,
    );
  }
  throw new UsageError(
    `unknown command "${word}": expected list, call, selftest or chat (see toolhost --help)`,
  );
}

type Values = Record<string, string | boolean | Array<string | boolean> | undefined>;

function parseFor(command: CommandName, args: string[]): { values: Values; positionals: string[] } {
  try {
    const options: Options = COMMAND_OPTIONS[command];
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values, positionals };
  } catch (error) {
    // parseArgs explains itself in one or two sentences; the first names the problem.
    const message = error instanceof Error ? error.message : String(error);
    const sentence = message.split(/\.\s/)[0]?.replace(/\.$/, '') ?? message;
    throw new UsageError(`${sentence} (see toolhost ${command} --help)`);
  }
}

function atLeastOnePath(command: CommandName, positionals: string[]): string[] {
  if (positionals.length === 0) {
    throw new UsageError(
      `${command} expects at least one package or module path (see toolhost ${command} --help)`,
    );
  }
  return positionals;
}

function stringOption(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function stringList(values: Values, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function positiveInteger(values: Values, name: string): number | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number <= 0) {
    throw new UsageError(`expected --${name} to be a positive integer, got ${JSON.stringify(value)}`);
  }
  return number;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
