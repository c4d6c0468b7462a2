/**
 * One voice for the `toolhost` command: every message it writes on its own behalf comes from one
 * catalogue (checked whole, with names and paths that would break the style if they led a sentence),
 * no CLI source writes one around it, and the default model is one id, the same in the CLI, its help,
 * the README, docs/ and the JSDoc, and current in the SDK.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CHAT_MODEL } from '../dist/src/cli/args/flags.js';
import { messages } from '../dist/src/cli/ui/messages.js';
import { REPO, runCli } from './support/cli-run.js';

/**
 * Arguments for every message, chosen to tempt a sentence into starting with something that is not
 * toolhost's own lowercase word: a capitalised tool name, a flag, an absolute path, a library sentence.
 */
const SAMPLES: Record<keyof typeof messages, unknown[]> = {
  noCommand: [],
  optionBeforeCommand: ['--json'],
  unknownCommand: ['Frob'],
  unknownOption: ['list', '--Frob'],
  missingValue: ['call', '--timeout'],
  optionLikeValue: ['-m', '--json', 'model'],
  renamedOption: ['--concurrency', '--jobs'],
  unexpectedValue: ['--json', 'Yes'],
  badNetworkGrant: ['Weather=Evil host', '"Evil host" is not a host name'],
  badSecret: ['GH=MISSING', 'the environment variable MISSING is not set'],
  notPositiveInteger: ['--jobs', '0'],
  unknownTier: ['--isolation', ['worker', 'strict', 'process'], 'Iron'],
  tierUnsupported: ['--isolation', 'v20.10.0'],
  missingPaths: ['selftest'],
  callArguments: [],
  callExtraArguments: [['"x"}']],
  chatPrompt: [],
  initExtraArguments: [['Two']],
  fromLibrary: ['No such file or directory: /srv/Tools'],
  argumentsNotJson: ['Unexpected token'],
  argumentsNotObject: ['an array'],
  argumentsDontMatch: ['Weather', '/city must be string'],
  unknownTool: ['Weather', '/srv/Tools', ['Forecast'], 1],
  toolLeftOut: ['Weather', 'IMPORT_FAILED', 'Unexpected token'],
  toolFailed: ['Weather', 'TOOL_THREW', 'Cannot read properties of undefined.'],
  callInterrupted: [],
  selftestsInterrupted: [],
  fault: ['/srv/Tools', 'a worker failed outside any call: Boom'],
  chatNeedsKey: [],
  moduleLeftOut: ['/srv/Tools/a.js', 'IMPORT_FAILED', 'Unexpected token'],
  apiFailed: ['authentication failed', 401, 'invalid x-api-key'],
  chatFailed: ['connection_error', 'the Messages API could not be reached: Connection error'],
  chatInterrupted: [],
  initWouldOverwrite: ['/srv/Tools/package.json'],
  initNotAFolder: ['Notes.txt'],
  initFailed: ['/srv/Tools/package.json', 'EACCES: permission denied'],
  serveNeedsSource: [],
  notHttpAddress: ['--http', 'Localhost:x'],
  needsHttp: ['--token-env'],
  tokenEnvUnset: ['--token-env', 'MCP_TOKEN'],
  notAnOrigin: ['--allow-origin', 'App.example'],
  serving: [3, 'on stdio'],
  listenFailed: ['/srv/Tools', 'EACCES: permission denied'],
  noSuchPath: ['/srv/nowhere'],
  noTokenBeyondLoopback: ['0.0.0.0:8080'],
  toolPrinted: ['Weather', 'Hello from a tool'],
  channelDropped: [4096],
  hostProcessEnded: ['SIGKILL'],
  hostWarning: ['/srv/Tools: a worker failed outside any call'],
  hostError: ['Something broke'],
  doctorExtraArguments: [['Pkg', '/srv/tools']],
  isolationDefault: ['process', 'a process per package, in a bubblewrap sandbox'],
  isolationNotice: [
    'Process isolation here runs without an OS sandbox (bubblewrap (bwrap) is not installed)',
  ],
};

const CLI_SOURCES = join(REPO, 'src/cli');

describe('the CLI’s messages', () => {
  it('every message in the catalogue is checked here', () => {
    expect(Object.keys(messages).sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  it.each(Object.keys(SAMPLES))(
    '%s is one line, starts with a lowercase word of its own, and has no closing period',
    (key) => {
      const message = messages[key as keyof typeof messages] as (...args: unknown[]) => string;
      const sentence = message(...(SAMPLES[key as keyof typeof messages] ?? []));
      expect(sentence).toMatch(/^[a-z]/);
      expect(sentence).not.toContain('\n');
      // A closing period belongs to text quoted from elsewhere only (the tool's own message here).
      if (key !== 'toolFailed') expect(sentence).not.toMatch(/\.$/);
    },
  );

  it('no CLI source writes a message around the catalogue', () => {
    const offences: string[] = [];
    for (const file of readdirSync(CLI_SOURCES, { recursive: true, encoding: 'utf8' }).filter((name) =>
      name.endsWith('.ts'),
    )) {
      if (file.endsWith('messages.ts')) continue;
      const source = readFileSync(join(CLI_SOURCES, file), 'utf8');
      for (const match of source.matchAll(/new UsageError\((?!\s*messages\.)/g)) {
        offences.push(
          `${file}: a UsageError whose sentence is not from messages: ${source.slice(match.index, match.index + 60)}`,
        );
      }
      for (const match of source.matchAll(/\.write\(\s*[`'"]toolhost: /g)) {
        offences.push(
          `${file}: a message written without writeMessage: ${source.slice(match.index, match.index + 60)}`,
        );
      }
    }
    expect(offences).toEqual([]);
  });
});

describe('the default model', () => {
  it('is a model id of the SDK that is not deprecated', () => {
    const sdk = join(REPO, 'node_modules/@anthropic-ai/sdk');
    const types = readFileSync(join(sdk, 'resources/messages/messages.d.ts'), 'utf8');
    const union = /export type Model = ([^;]+);/.exec(types)?.[1] ?? '';
    const models = [...union.matchAll(/'([^']+)'/g)].map((match) => match[1]);
    expect(models).toContain(DEFAULT_CHAT_MODEL);
    const deprecated = readFileSync(join(sdk, 'internal/data/deprecated-models.js'), 'utf8');
    expect(deprecated).toContain("'claude-");
    expect(deprecated).not.toContain(`'${DEFAULT_CHAT_MODEL}'`);
  });

  it('is the only model id in the README, docs/ and the JSDoc of the sources', () => {
    const docs = readdirSync(join(REPO, 'docs')).filter((name) => name.endsWith('.md'));
    const sources = [
      join(REPO, 'README.md'),
      ...docs.map((name) => join(REPO, 'docs', name)),
      ...sourceFiles(join(REPO, 'src')),
    ];
    const found = new Set<string>();
    for (const file of sources) {
      for (const match of readFileSync(file, 'utf8').matchAll(/\bclaude-[a-z0-9-]*\d[a-z0-9-]*/g))
        found.add(match[0]);
    }
    expect([...found]).toEqual([DEFAULT_CHAT_MODEL]);
  });

  it('is what toolhost chat --help names', async () => {
    const help = await runCli(['chat', '--help'], { tmpDir: REPO });
    expect(help.stdout).toContain(`(default $ANTHROPIC_MODEL, else ${DEFAULT_CHAT_MODEL})`);
  });
});

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}
