/**
 * The command line, parsed with `node:util` parseArgs into one typed command, with the flags of
 * `flags.ts`. Every mistake is a {@link UsageError} with one sentence (from {@link messages}) that
 * names the option as it was typed.
 */
import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { DEFAULT_LOCK_FILE_NAME } from '../../lock/lock-file.js';
import { UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import { asksForVersion } from './asks-for-version.js';
import { closestWord } from './closest-word.js';
import type {
  CallArgs,
  ChatArgs,
  DoctorArgs,
  InitArgs,
  ListArgs,
  McpConfigArgs,
  ParsedCommandLine,
  PinArgs,
  SelftestArgs,
  ServeArgs,
} from './command-line.js';
import { COMMANDS, type CommandName } from './command-names.js';
import { FLAGS, findFlag, flagsOf } from './flags.js';
import { atLeastOnePath, flagValue, type Parsed } from './option-values.js';
import { serveArgs } from './serve-args.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses `argv` (without node and the script). `env` supplies what flags fall back on (`TOOLHOST_DATA_DIR`). */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ParsedCommandLine {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError(messages.noCommand());
  if (first === '--help' || first === '-h') return { command: 'help', topic: undefined };
  if (asksForVersion(argv)) return { command: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { command: 'help', topic: undefined };
    return { command: 'help', topic: commandName(topic) };
  }
  const command = commandName(first);
  const parsed = parseFor(command, rest);
  if (parsed.values['help'] === true) return { command: 'help', topic: command };
  const { positionals } = parsed;
  checkPositionals(command, positionals);
  // Each command's fields are its flags' (see command-line.ts).
  const fields: Record<string, unknown> = {};
  for (const flag of flagsOf(command)) {
    if (flag.field !== undefined) fields[flag.field] = flagValue(flag, command, parsed, env);
  }
  return commandArgs(command, fields, parsed, env);
}

/** Positional mistakes first: what the command is for, before how it was asked to do it. */
function checkPositionals(command: CommandName, positionals: string[]): void {
  if (command === 'call' && (positionals[0] === undefined || positionals[1] === undefined))
    throw new UsageError(messages.callArguments());
  if (command === 'call' && positionals.length > 3)
    throw new UsageError(messages.callExtraArguments(positionals.slice(3)));
  if (command === 'init' && positionals.length > 1)
    throw new UsageError(messages.initExtraArguments(positionals.slice(1)));
  if (command === 'chat' && positionals.join(' ').trim() === '') throw new UsageError(messages.chatPrompt());
  if (command === 'doctor' && positionals.length > 0)
    throw new UsageError(messages.doctorExtraArguments(positionals));
  if (
    !(
      command === 'serve' ||
      command === 'call' ||
      command === 'init' ||
      command === 'chat' ||
      command === 'doctor'
    )
  )
    atLeastOnePath(command, positionals);
}

/** A command's arguments: its flags' fields (the casts name which) and its positionals. */
function commandArgs(
  command: CommandName,
  fields: Record<string, unknown>,
  parsed: Parsed,
  env: Readonly<Record<string, string | undefined>>,
): Exclude<ParsedCommandLine, { command: 'help' } | { command: 'version' }> {
  const { positionals } = parsed;
  switch (command) {
    case 'init':
      return { command, ...(fields as Omit<InitArgs, 'command' | 'dir'>), dir: positionals[0] ?? '.' };
    case 'call': {
      const [path = '', tool = '', argsJson = '{}'] = positionals;
      return {
        command,
        ...(fields as Omit<CallArgs, 'command' | 'path' | 'tool' | 'argsJson'>),
        path,
        tool,
        argsJson,
      };
    }
    case 'chat':
      return {
        command,
        ...(fields as Omit<ChatArgs, 'command' | 'prompt'>),
        prompt: positionals.join(' ').trim(),
      };
    case 'serve':
      return serveArgs(fields as Omit<ServeArgs, 'command' | 'paths' | 'token'>, parsed, env);
    case 'selftest':
      return { command, ...(fields as Omit<SelftestArgs, 'command' | 'paths'>), paths: positionals };
    case 'list':
      return { command, ...(fields as Omit<ListArgs, 'command' | 'paths'>), paths: positionals };
    case 'mcp-config':
      return { command, ...(fields as Omit<McpConfigArgs, 'command' | 'paths'>), paths: positionals };
    case 'doctor':
      return { command, ...(fields as Omit<DoctorArgs, 'command'>) };
    case 'pin': {
      // Its --lock is the file it writes: there is always one.
      const lock = (fields['lock'] as string | undefined) ?? resolve(DEFAULT_LOCK_FILE_NAME);
      return {
        command,
        ...(fields as Omit<PinArgs, 'command' | 'paths' | 'lock'>),
        paths: positionals,
        lock,
      };
    }
  }
}

function commandName(word: string): CommandName {
  if ((COMMANDS as readonly string[]).includes(word)) return word as CommandName;
  if (word.startsWith('-')) throw new UsageError(messages.optionBeforeCommand(word));
  throw new UsageError(messages.unknownCommand(word, closestWord(word, COMMANDS)));
}

/** The parseArgs options of `command`: its declared flags. */
function optionsOf(command: CommandName): Options {
  const options: Options = {};
  for (const flag of flagsOf(command)) {
    options[flag.name] = {
      type: flag.kind === 'switch' ? 'boolean' : 'string',
      multiple: flag.kind === 'texts' || flag.kind === 'grants' || flag.kind === 'secrets',
      ...(flag.short === undefined ? {} : { short: flag.short }),
    };
  }
  return options;
}

/**
 * Parses leniently, then checks each option token itself: parseArgs' strict mode would do the same
 * checks, but in sentences of its own style ("Unknown option '--frob'. To specify ...").
 */
function parseFor(command: CommandName, args: string[]): Parsed {
  const options = optionsOf(command);
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
    const flag = findFlag(command, token.name);
    if (flag === undefined) {
      const renamed = FLAGS.find(
        (known) => known.renamedFrom === token.name && known.commands.includes(command),
      );
      if (renamed !== undefined)
        throw new UsageError(messages.renamedOption(token.rawName, `--${renamed.name}`));
      throw new UsageError(messages.unknownOption(command, token.rawName));
    }
    if (flag.kind === 'switch' && token.value !== undefined) {
      throw new UsageError(messages.unexpectedValue(token.rawName, token.value));
    }
    if (flag.kind !== 'switch') {
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
