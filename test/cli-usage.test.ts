/**
 * The built `toolhost` command: help, and every user mistake answered with exit code 2 and exactly
 * one line on stderr in the command's one voice (`toolhost: <lowercase sentence>`, no stack trace),
 * nothing on stdout, and no temp dir left behind.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, freshDir, PACKAGES, REPO, runCli, stderrLines } from './support/cli-run.js';

let tmp: ReturnType<typeof freshDir>;
let work: ReturnType<typeof freshDir>;

beforeEach(() => {
  tmp = freshDir('cli-usage-tmp');
  work = freshDir('cli-usage-work');
});
afterEach(() => {
  tmp.remove();
  work.remove();
});

const run = (...args: string[]) => runCli(args, { tmpDir: tmp.path, cwd: work.path });

/** The message this Node's `JSON.parse` gives for `text`. */
function jsonParseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} parsed`);
}

function expectUsageError(result: CliResult, line: string): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(stderrLines(result)).toEqual([`toolhost: ${line}`]);
  expect(stderrLines(result)[0]).toMatch(/^toolhost: [a-z][^\n]*[^.]$/);
  expect(readdirSync(tmp.path)).toEqual([]);
}

describe('toolhost help', () => {
  it('--help prints the overview on stdout and exits 0', async () => {
    const result = await run('--help');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('toolhost list <package-or-module>...');
    expect(result.stdout).toContain('toolhost selftest <package-or-module>...');
    expect(result.stdout).toContain('Exit codes: 0 ok, 1 a tool or selftest failed,');
  });

  it.each(['list', 'call', 'selftest', 'chat', 'serve', 'init'])(
    '%s --help prints that command’s usage and exits 0',
    async (command) => {
      const result = await run(command, '--help');
      expect(result.code).toBe(0);
      expect(result.stdout.split('\n')[0]).toMatch(new RegExp(`^Usage: toolhost ${command} `));
    },
  );

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    const result = await run('--version');
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('help <command> is the same as <command> --help', async () => {
    const [viaHelp, viaFlag] = await Promise.all([run('help', 'selftest'), run('selftest', '--help')]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });
});

describe('a user mistake is one line on stderr and exit code 2', () => {
  it('no command at all', async () => {
    expectUsageError(
      await run(),
      'expected a command: list, call, selftest, chat, serve, init, pin or doctor (see toolhost --help)',
    );
  });

  it('an unknown command', async () => {
    expectUsageError(
      await run('frobnicate'),
      'unknown command "frobnicate": expected list, call, selftest, chat, serve, init, pin or doctor (see toolhost --help)',
    );
  });

  it('an option before the command', async () => {
    expectUsageError(
      await run('--json', 'list'),
      'expected a command before --json: list, call, selftest, chat, serve, init, pin or doctor (see toolhost --help)',
    );
  });

  it('an unknown option, named as typed', async () => {
    expectUsageError(
      await run('list', '--frob', join(PACKAGES, 'notes')),
      'unknown option --frob (see toolhost list --help)',
    );
    expectUsageError(
      await run('selftest', '-x', join(PACKAGES, 'notes')),
      'unknown option -x (see toolhost selftest --help)',
    );
  });

  it('an option without its value', async () => {
    expectUsageError(
      await run('call', join(PACKAGES, 'notes'), 'notes_add', '--timeout'),
      'expected a value after --timeout (see toolhost call --help)',
    );
  });

  it('an option whose value looks like another option', async () => {
    expectUsageError(
      await run('chat', '-m', '--json', 'hello'),
      'expected a value after -m, got --json (write --model=--json for a value that starts with "-")',
    );
  });

  it('a value for an option that takes none', async () => {
    expectUsageError(
      await run('list', '--json=yes', join(PACKAGES, 'notes')),
      'expected no value for --json, got "yes"',
    );
  });

  it('an option value that is not a positive integer', async () => {
    expectUsageError(
      await run('selftest', '--jobs', '0', join(PACKAGES, 'notes')),
      'expected --jobs to be a positive integer, got "0"',
    );
    expectUsageError(
      await run('call', '--heap-mb=lots', join(PACKAGES, 'notes'), 'notes_add'),
      'expected --heap-mb to be a positive integer, got "lots"',
    );
  });

  it('an isolation tier that does not exist, named by its flag', async () => {
    expectUsageError(
      await run('selftest', '--isolation', 'iron', join(PACKAGES, 'notes')),
      'expected --isolation to be worker, strict or process, got "iron"',
    );
  });

  it('a command without its paths', async () => {
    expectUsageError(
      await run('selftest'),
      'selftest expects at least one package or module path (see toolhost selftest --help)',
    );
  });

  it('call without a tool name, or with more than one argument object', async () => {
    expectUsageError(
      await run('call', join(PACKAGES, 'notes')),
      'call expects a package or module path and a tool name (see toolhost call --help)',
    );
    expectUsageError(
      await run('call', join(PACKAGES, 'notes'), 'notes_add', '{"text":', '"x"}'),
      'call takes one JSON argument object, got extra arguments: "x"} (quote the JSON)',
    );
  });

  it('chat without a prompt', async () => {
    expectUsageError(
      await run('chat', '--model', 'claude-test'),
      'chat expects a prompt (see toolhost chat --help)',
    );
  });

  it('init with more than one folder', async () => {
    expectUsageError(
      await run('init', 'one', 'two'),
      'init takes one folder, got extra arguments: two (see toolhost init --help)',
    );
  });

  it.each(['list', 'selftest'])('%s of a path that does not exist', async (command) => {
    expectUsageError(await run(command, 'no/such/package'), 'no such file or directory: no/such/package');
  });

  it('a folder without a package.json is not a tool package', async () => {
    mkdirSync(join(work.path, 'plain-folder'));
    expectUsageError(
      await run('selftest', 'plain-folder'),
      'not a tool package: plain-folder has no package.json',
    );
  });

  it('a package.json without a toolhost.tools list is not a tool package', async () => {
    mkdirSync(join(work.path, 'app'));
    writeFileSync(join(work.path, 'app', 'package.json'), JSON.stringify({ name: 'app', type: 'module' }));
    const result = await run('list', 'app');
    expectUsageError(
      result,
      `not a tool package: ${join(work.path, 'app', 'package.json')} has no "toolhost": { "tools": [...] } list of module paths`,
    );
  });

  it.each([
    ['"yes"', '... } that is not an object'],
    ['{ "net": "yes" }', '{ "net": ... } } that is not true, false or a list of hosts'],
    [
      '{ "net": ["api.weather.gov", "*.com"] }',
      '{ "net": [...] } } where "*.com" is a wildcard over a top-level domain',
    ],
    [
      '{ "net": ["api.weather.gov:99999"] }',
      '{ "net": [...] } } where "api.weather.gov:99999" has a port that is not 1 to 65535',
    ],
  ])('a manifest whose "permissions" are %s is not a tool package', async (permissions, problem) => {
    mkdirSync(join(work.path, 'app'));
    writeFileSync(
      join(work.path, 'app', 'package.json'),
      `{ "name": "app", "toolhost": { "tools": [], "permissions": ${permissions} } }`,
    );
    const result = await run('list', 'app');
    expectUsageError(
      result,
      `not a tool package: ${join(work.path, 'app', 'package.json')} has "toolhost": { "permissions": ${problem}`,
    );
  });

  it('call arguments that are not JSON', async () => {
    // The reason is Node's own parse error, whose wording changes between Node lines (Node 26 adds
    // "(line 1 column 2)"): the child runs this same Node, so ask it.
    expectUsageError(
      await run('call', join(PACKAGES, 'notes'), 'notes_add', '{text: 1}'),
      `the arguments are not valid JSON: ${jsonParseError('{text: 1}')}`,
    );
  });

  it('call arguments that are JSON but not an object', async () => {
    expectUsageError(
      await run('call', join(PACKAGES, 'notes'), 'notes_add', '["buy milk"]'),
      'the arguments must be a JSON object, got an array',
    );
  });

  it('call arguments that do not match the tool’s parameterSchema', async () => {
    expectUsageError(
      await run(
        'call',
        join(PACKAGES, 'unit-converter'),
        'convert_length',
        '{"value": "5", "from": "km", "to": "mi"}',
      ),
      "the arguments do not match convert_length's parameterSchema: /value must be number",
    );
  });

  it('call of a tool the package does not offer', async () => {
    expectUsageError(
      await run('call', join(PACKAGES, 'unit-converter'), 'convert_currency'),
      `unknown tool "convert_currency" in ${join(PACKAGES, 'unit-converter')}; it offers convert_length, convert_temperature`,
    );
  });

  it('chat without ANTHROPIC_API_KEY', async () => {
    expectUsageError(
      await run('chat', '--tools', join(PACKAGES, 'unit-converter'), 'How far is 5 km in miles?'),
      'chat needs ANTHROPIC_API_KEY in the environment',
    );
  });

  it('--json does not turn a usage error into JSON', async () => {
    expectUsageError(await run('list', '--json', 'missing'), 'no such file or directory: missing');
  });
});
