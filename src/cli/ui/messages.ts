/**
 * Every message the `toolhost` command writes on its own behalf, in one voice: a line on stderr,
 * `toolhost: <sentence>`, where the sentence starts with a lowercase word of toolhost's own (never a
 * name, a path or a flag), has no closing period, names options as the user typed them (`--isolation`,
 * `-m`) and quotes values the user gave (`"iron"`). Text from elsewhere (a tool's error message, a
 * module's left-out reason, the API's message) comes last, after a colon, as it is.
 *
 * The sentences live here, and only here, so the whole list can be read (and tested) in one place.
 * What a command prints as its *result* (tables, tool output, the chat transcript) is not a message.
 */
import { COMMANDS } from '../args/command-names.js';
import type { OutputStream } from './terminal.js';

/** Every command, from the one table of them: `list, call, … or doctor`. */
const COMMAND_LIST = `${COMMANDS.slice(0, -1).join(', ')} or ${COMMANDS.at(-1)}`;

/** `see toolhost <command> --help`, the hint a usage error ends with. */
function seeHelp(command?: string): string {
  return command === undefined ? '(see toolhost --help)' : `(see toolhost ${command} --help)`;
}

/** The sentences, by what they say. Each returns the sentence without the `toolhost: ` prefix. */
export const messages = {
  // The command line.
  noCommand: () => `expected a command: ${COMMAND_LIST} ${seeHelp()}`,
  optionBeforeCommand: (option: string) =>
    `expected a command before ${option}: ${COMMAND_LIST} ${seeHelp()}`,
  unknownCommand: (word: string, closest: string | undefined) =>
    `unknown command ${JSON.stringify(word)}: ${closest === undefined ? '' : `did you mean ${closest}? `}expected ${COMMAND_LIST} ${seeHelp()}`,
  unknownOption: (command: string, option: string) => `unknown option ${option} ${seeHelp(command)}`,
  missingValue: (command: string, option: string) => `expected a value after ${option} ${seeHelp(command)}`,
  optionLikeValue: (option: string, value: string, longName: string) =>
    `expected a value after ${option}, got ${value} (write --${longName}=${value} for a value that starts with "-")`,
  renamedOption: (option: string, renamed: string) =>
    `expected ${renamed} instead of ${option}, its former name`,
  unexpectedValue: (option: string, value: string) =>
    `expected no value for ${option}, got ${JSON.stringify(value)}`,
  badNetworkGrant: (value: string, reason: string) =>
    `expected --allow-network to be PACKAGE or PACKAGE=HOST,HOST..., got ${JSON.stringify(value)}: ${reason}`,
  badSecret: (value: string, reason: string) =>
    `expected --secret to be NAME or NAME=VAR, got ${JSON.stringify(value)}: ${reason}`,
  notPositiveInteger: (option: string, value: string) =>
    `expected ${option} to be a positive integer, got ${JSON.stringify(value)}`,
  unknownTier: (option: string, tiers: readonly string[], value: string) =>
    `expected ${option} to be ${oneOf(tiers)}, got ${JSON.stringify(value)}`,
  tierUnsupported: (option: string, version: string) =>
    `this Node.js (${version}) can't run ${option} strict: its permission model covers WASI from Node.js 20.16 on`,
  missingPaths: (command: string) =>
    `${command} expects at least one package or module path ${seeHelp(command)}`,
  callArguments: () => `call expects a package or module path and a tool name ${seeHelp('call')}`,
  callExtraArguments: (extra: readonly string[]) =>
    `call takes one JSON argument object, got extra arguments: ${extra.join(' ')} (quote the JSON)`,
  chatPrompt: () => `chat expects a prompt ${seeHelp('chat')}`,
  doctorExtraArguments: (extra: readonly string[]) =>
    `doctor takes no arguments, got: ${extra.join(' ')} ${seeHelp('doctor')}`,
  initExtraArguments: (extra: readonly string[]) =>
    `init takes one folder, got extra arguments: ${extra.join(' ')} ${seeHelp('init')}`,

  // A caller's mistake the library reports (a missing path, not a tool package), in this voice.
  fromLibrary: (sentence: string) => lowerFirst(sentence),

  // call
  argumentsNotJson: (reason: string) => `the arguments are not valid JSON: ${reason}`,
  argumentsNotObject: (kind: string) => `the arguments must be a JSON object, got ${kind}`,
  argumentsDontMatch: (tool: string, errors: string) =>
    `the arguments do not match ${tool}'s parameterSchema: ${errors}`,
  unknownTool: (tool: string, path: string, offered: readonly string[], leftOut: number) =>
    `unknown tool ${JSON.stringify(tool)} in ${path}; it offers ${offered.length === 0 ? 'no tools' : offered.join(', ')}${leftOut === 0 ? '' : ` (${leftOut} left out: toolhost list shows why)`}`,
  toolLeftOut: (tool: string, code: string, reason: string) =>
    `the tool ${JSON.stringify(tool)} is left out: ${code}: ${reason}`,
  toolFailed: (tool: string, code: string, message: string) =>
    `the tool ${JSON.stringify(tool)} failed: ${code}: ${message}`,
  callInterrupted: () => 'interrupted; the call was stopped',

  // selftest
  selftestsInterrupted: () => 'interrupted; the selftests were stopped and their temp dirs removed',
  fault: (source: string, message: string) => `fault in ${source}: ${message}`,

  // chat
  chatNeedsKey: () => 'chat needs ANTHROPIC_API_KEY in the environment',
  moduleLeftOut: (path: string, code: string, reason: string) => `left out ${path}: ${code}: ${reason}`,
  apiFailed: (what: string, status: number, message: string) => `${what} (${status}): ${message}`,
  chatFailed: (type: string, message: string) => `chat failed: ${type}: ${message}`,
  chatInterrupted: () => 'interrupted; the conversation was stopped',

  // init
  initWouldOverwrite: (path: string) => `refusing to overwrite ${path}, which exists; nothing was written`,
  initNotAFolder: (path: string) => `cannot create a tool package in ${path}: it is a file, not a folder`,
  initFailed: (path: string, reason: string) => `could not write ${path}: ${reason}; nothing was written`,

  // serve
  serveNeedsSource: () => `serve expects a package or module path, or --watch DIR ${seeHelp('serve')}`,
  notHttpAddress: (option: string, value: string) =>
    `expected ${option} to be [host:]port with a port from 0 to 65535, got ${JSON.stringify(value)}`,
  needsHttp: (option: string) => `expected --http beside ${option}, which applies to HTTP only`,
  tokenEnvUnset: (option: string, name: string) =>
    `expected the environment variable ${name} (named by ${option}) to hold the token, but it is empty or not set`,
  notAnOrigin: (option: string, value: string) =>
    `expected ${option} to be an origin such as https://app.example, got ${JSON.stringify(value)}`,
  serving: (tools: number, where: string) =>
    `serving ${tools} ${tools === 1 ? 'tool' : 'tools'} over MCP ${where}`,
  listenFailed: (address: string, reason: string) => `could not listen on ${address}: ${reason}`,
  noSuchPath: (path: string) => `no such file or directory: ${path}`,
  noTokenBeyondLoopback: (address: string) =>
    `warning: listening on ${address}, beyond loopback, without --token-env: anyone who can reach this address can call every tool`,
  toolPrinted: (tool: string, text: string) => `the tool ${JSON.stringify(tool)} printed: ${text}`,
  channelDropped: (bytes: number) =>
    `dropped ${bytes} bytes from the tool host process that were not signed protocol messages (a tool wrote into its channel); only the first drop is reported`,
  hostProcessEnded: (how: string) => `the tool host process ended unexpectedly (${how})`,
  hostWarning: (message: string) => `warning: ${message}`,

  // The host's own log (a fault of toolhost, not of a tool).
  hostError: (message: string) => `the host reported an error: ${message}`,
  // Which tier runs when --isolation names none (once, before anything loads).
  isolationDefault: (tier: string, holds: string) =>
    `isolation: ${tier}, the strongest here: ${holds}; --isolation worker or strict runs trusted tools faster`,
  // What the chosen isolation tier lacks on this machine, as the host says it (once).
  isolationNotice: (notice: string) => `note: ${notice}`,
} satisfies Record<string, (...args: never[]) => string>;

/**
 * Writes one message: `toolhost: <sentence>` and a line break, then the lines that continue it (a
 * multi-line error's rest, already indented) as they are.
 */
export function writeMessage(
  stream: OutputStream,
  sentence: string,
  continuation: readonly string[] = [],
): void {
  stream.write(`toolhost: ${sentence}\n`);
  for (const line of continuation) stream.write(`${line}\n`);
}

/** `a or b`, `a, b or c`. */
function oneOf(words: readonly string[]): string {
  return words.length <= 2 ? words.join(' or ') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

function lowerFirst(sentence: string): string {
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}
