/**
 * The flags of `toolhost`, declared once: the parser takes exactly the declared flags of each
 * command, each command's help lists exactly those, docs/cli.md's option table is the one the
 * declaration makes, a flag's host or server option is what the command hands on, and a renamed
 * flag's former name is a usage error that names the new one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../dist/src/cli/args/args.js';
import { COMMANDS } from '../dist/src/cli/args/command-names.js';
import { FLAGS, type Flag } from '../dist/src/cli/args/flags.js';
import { flagSyntax, helpText } from '../dist/src/cli/args/help.js';
import { optionTable } from '../dist/src/cli/args/option-table.js';
import { hostOptions } from '../dist/src/cli/commands/host-setup.js';
import { freshDir, PACKAGES, REPO, runCli, stderrLines } from './support/cli-run.js';

/** What each command needs besides its options to be a whole command line. */
const POSITIONALS: Record<(typeof COMMANDS)[number], string[]> = {
  list: ['pkg'],
  call: ['pkg', 'tool'],
  selftest: ['pkg'],
  chat: ['hello'],
  serve: ['pkg'],
  'mcp-config': ['pkg'],
  init: [],
  pin: ['pkg'],
  doctor: [],
};

/** A value of the flag's kind that its reader accepts. */
const SAMPLE: Record<Flag['kind'], string | undefined> = {
  switch: undefined,
  text: 'x',
  texts: 'x',
  count: '3',
  tier: 'worker',
  file: 'some.lock.json',
  grants: 'weather',
  address: '8080',
  secrets: 'TOKEN',
};

function typed(flag: Flag): string[] {
  const value = SAMPLE[flag.kind];
  return value === undefined ? [`--${flag.name}`] : [`--${flag.name}`, value];
}

/** The sentence of the usage error `argv` makes, or undefined when it parses. */
function usageError(argv: string[]): string | undefined {
  try {
    parseCommandLine(argv, { TOKEN: 'secret' });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe.each([...COMMANDS])('toolhost %s', (command) => {
  const takes = FLAGS.filter((flag) => flag.commands.includes(command) && flag.name !== 'help');
  const refuses = FLAGS.filter((flag) => !flag.commands.includes(command));

  it('parses every flag it is declared to take', () => {
    for (const flag of takes) {
      // serve's --token-env and --allow-origin come with --http, and read a variable that is set.
      const needs = command === 'serve' && flag.name !== 'http' ? ['--http', '8080'] : [];
      const value = flag.name === 'token-env' ? ['--token-env', 'TOKEN'] : typed(flag);
      const origin = flag.name === 'allow-origin' ? ['--allow-origin', 'https://app.example'] : value;
      expect(usageError([command, ...needs, ...origin, ...POSITIONALS[command]]), flag.name).toBeUndefined();
    }
  });

  it('refuses every flag it is not declared to take, as an unknown option', () => {
    for (const flag of refuses) {
      expect(usageError([command, ...typed(flag), ...POSITIONALS[command]]), flag.name).toBe(
        `unknown option --${flag.name} (see toolhost ${command} --help)`,
      );
    }
  });

  it('lists exactly its flags in its help, each once', () => {
    const help = helpText(command);
    const lines = help.slice(help.indexOf('\nOptions:\n')).split('\n');
    const listing = (flag: Flag) =>
      lines.filter((line) => line === `  ${flagSyntax(flag)}` || line.startsWith(`  ${flagSyntax(flag)} `));
    for (const flag of FLAGS) {
      expect(listing(flag), flag.name).toHaveLength(flag.commands.includes(command) ? 1 : 0);
    }
  });
});

describe('the declaration', () => {
  it('is the option table of docs/cli.md', () => {
    const readme = readFileSync(join(REPO, 'docs/cli.md'), 'utf8');
    const start = readme.indexOf('| option | commands | meaning |');
    const table = readme.slice(start, readme.indexOf('\n\n', start));
    expect(table).toBe(optionTable());
  });

  it('hands every flag that sets a host option to the host, as parsed', () => {
    const hosted = FLAGS.filter((flag) => flag.hostOption !== undefined);
    expect(hosted.length).toBeGreaterThan(0);
    for (const flag of hosted) {
      const command = flag.commands[0];
      if (command === undefined) throw new Error(`${flag.name} is taken by no command`);
      const parsed = parseCommandLine([command, ...typed(flag), ...POSITIONALS[command]], {
        TOKEN: 'value',
      });
      if (parsed.command === 'help' || parsed.command === 'version' || !('allowEnv' in parsed)) {
        throw new Error(`${command} takes no host options`);
      }
      const options = hostOptions(parsed, { write: () => true }) as Record<string, unknown>;
      const field = (parsed as unknown as Record<string, unknown>)[flag.field ?? ''];
      expect(field, flag.name).toBeDefined();
      expect(options[flag.hostOption ?? ''], flag.name).toEqual(field);
    }
  });

  it('gives serve’s --threads to the host as its threads per pool', () => {
    const parsed = parseCommandLine(['serve', '--threads', '3', 'pkg'], {});
    if (parsed.command !== 'serve') throw new Error('not serve');
    expect(hostOptions(parsed, { write: () => true }).maxThreadsPerPool).toBe(3);
  });

  it('falls back on TOOLHOST_DATA_DIR for --data-dir, and an empty one counts as unset', () => {
    const withVariable = parseCommandLine(['call', 'pkg', 'tool'], { TOOLHOST_DATA_DIR: '/srv/data' });
    const empty = parseCommandLine(['call', 'pkg', 'tool'], { TOOLHOST_DATA_DIR: '' });
    const typedToo = parseCommandLine(['call', '--data-dir', 'here', 'pkg', 'tool'], {
      TOOLHOST_DATA_DIR: '/srv',
    });
    expect(
      [withVariable, empty, typedToo].map((parsed) => ('dataDir' in parsed ? parsed.dataDir : null)),
    ).toEqual(['/srv/data', undefined, 'here']);
  });
});

describe('a renamed flag', () => {
  let tmp: ReturnType<typeof freshDir>;
  beforeEach(() => {
    tmp = freshDir('cli-flags-tmp');
  });
  afterEach(() => tmp.remove());

  it.each([
    ['selftest', '--jobs'],
    ['serve', '--threads'],
  ])('%s --concurrency is a usage error that names %s, and runs nothing', async (command, renamed) => {
    const result = await runCli([command, '--concurrency', '2', join(PACKAGES, 'notes')], {
      tmpDir: tmp.path,
      cwd: tmp.path,
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toEqual([
      `toolhost: expected ${renamed} instead of --concurrency, its former name`,
    ]);
  });

  it('is an unknown option in a command where no flag had that name', () => {
    expect(usageError(['list', '--concurrency', '2', 'pkg'])).toBe(
      'unknown option --concurrency (see toolhost list --help)',
    );
  });
});
