/**
 * The built `toolhost init`: a new tool package in a real temp dir that the real `toolhost selftest`
 * passes at once (nothing installed, no network) and `toolhost call` calls; whose tool type-checks
 * against toolhost's own types; and that never overwrites a file, leaving nothing half-written.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDir, REPO, runCli, stderrLines } from './support/cli-run.js';

let tmp: ReturnType<typeof freshDir>;
let work: ReturnType<typeof freshDir>;

beforeEach(() => {
  tmp = freshDir('cli-init-tmp');
  work = freshDir('cli-init-work');
});
afterEach(() => {
  tmp.remove();
  work.remove();
});

const run = (args: string[], cwd = work.path) => runCli(args, { tmpDir: tmp.path, cwd });

const FILES = ['README.md', 'jsconfig.json', 'package.json', 'tools'];

describe('toolhost init', () => {
  it('creates a package whose selftest passes at once, and whose tool toolhost call runs', async () => {
    const created = await run(['init', 'weather-tools']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toBe(
      [
        'created weather-tools/package.json',
        'created weather-tools/jsconfig.json',
        'created weather-tools/tools/count-words.js',
        'created weather-tools/README.md',
        '',
        'Next:',
        '  npx --no toolhost selftest weather-tools',
        `  npx --no toolhost call weather-tools count_words '{"text": "the cat saw the dog"}'`,
        '',
      ].join('\n'),
    );
    const folder = join(work.path, 'weather-tools');
    expect(readdirSync(folder).sort()).toEqual(FILES);
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'weather-tools',
      type: 'module',
      toolhost: { tools: ['./tools/count-words.js'] },
    });
    // toolhost is not on the npm registry: no range it could serve, and no path to this machine's
    // installation, which no other machine has. The README says how to add it.
    expect(manifest.devDependencies).toEqual({ typescript: expect.any(String) });
    expect(JSON.stringify(manifest)).not.toContain('file:');
    const readme = readFileSync(join(folder, 'README.md'), 'utf8');
    expect(readme).toMatch(/^# weather-tools\n/);
    expect(readme).toContain('npm install --save-dev /path/to/toolhost-<version>.tgz');
    expect(readme).toContain('npx --no toolhost selftest .');

    const selftest = await run(['selftest', 'weather-tools']);
    expect(selftest.stderr).toBe('');
    expect(selftest.code).toBe(0);
    expect(selftest.stdout).toContain('passed      count_words (weather-tools)');
    expect(selftest.stdout.endsWith('\n1 tool: 1 passed, 0 failed, 0 without a selftest, 0 left out\n')).toBe(
      true,
    );

    const call = await run([
      'call',
      'weather-tools',
      'count_words',
      '{"text": "The cat saw the cat", "unique": true}',
    ]);
    expect(call).toMatchObject({ code: 0, stdout: '3 words\n', stderr: '' });
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('without a folder, fills the current one and names the package after it', async () => {
    const folder = join(work.path, 'My Tools');
    mkdirSync(folder);
    const result = await run(['init', '--json'], folder);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      dir: folder,
      packageName: 'my-tools',
      files: ['package.json', 'jsconfig.json', 'tools/count-words.js', 'README.md'],
    });
    expect(JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).name).toBe('my-tools');
    expect((await run(['selftest', '.'], folder)).code).toBe(0);
  });

  it('refuses to overwrite a file that exists: one line naming it, exit 2, nothing written', async () => {
    const folder = join(work.path, 'existing');
    mkdirSync(folder);
    writeFileSync(join(folder, 'README.md'), 'my own notes\n');
    const result = await run(['init', 'existing']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toEqual([
      'toolhost: refusing to overwrite existing/README.md, which exists; nothing was written',
    ]);
    expect(readdirSync(folder)).toEqual(['README.md']);
    expect(readFileSync(join(folder, 'README.md'), 'utf8')).toBe('my own notes\n');
  });

  it('run twice, the second run changes nothing', async () => {
    expect((await run(['init', 'twice'])).code).toBe(0);
    const tool = join(work.path, 'twice', 'tools', 'count-words.js');
    writeFileSync(tool, `${readFileSync(tool, 'utf8')}// edited\n`);
    const again = await run(['init', 'twice']);
    expect(again.code).toBe(2);
    expect(stderrLines(again)).toEqual([
      'toolhost: refusing to overwrite twice/package.json, which exists; nothing was written',
    ]);
    expect(readFileSync(tool, 'utf8').endsWith('// edited\n')).toBe(true);
  });

  it('a folder that is a file is a usage error', async () => {
    writeFileSync(join(work.path, 'notes.txt'), 'x');
    const result = await run(['init', 'notes.txt']);
    expect(result.code).toBe(2);
    expect(stderrLines(result)).toEqual([
      'toolhost: cannot create a tool package in notes.txt: it is a file, not a folder',
    ]);
  });

  it('a write that fails halfway removes what it wrote', async () => {
    // tools/ is a dangling link: the check finds no tools/count-words.js, but the folder can't be made
    // after package.json and jsconfig.json were written.
    const folder = join(work.path, 'halfway');
    mkdirSync(folder);
    symlinkSync(join(work.path, 'nowhere'), join(folder, 'tools'));
    const result = await run(['init', 'halfway']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(stderrLines(result)).toHaveLength(1);
    expect(stderrLines(result)[0]).toMatch(
      /^toolhost: could not write halfway\/tools\/count-words\.js: .+; nothing was written$/,
    );
    expect(readdirSync(folder)).toEqual(['tools']);
  });
});

describe('the tool init writes', () => {
  it('type-checks (checkJs) against toolhost/tool, and a misspelt argument does not', async () => {
    expect((await run(['init', 'typed'])).code).toBe(0);
    const folder = join(work.path, 'typed');
    // As `npm install` would place the devDependency.
    mkdirSync(join(folder, 'node_modules'));
    symlinkSync(REPO, join(folder, 'node_modules', 'toolhost'), 'dir');
    expect(typeErrors(folder)).toEqual([]);

    const tool = join(folder, 'tools', 'count-words.js');
    const source = readFileSync(tool, 'utf8');
    expect(source).toContain('run({ text, unique = false }) {');
    writeFileSync(tool, source.replace('run({ text, unique = false }) {', 'run({ txt, unique = false }) {'));
    expect(typeErrors(folder).join('\n')).toContain("Property 'txt' does not exist");
  });
});

/** What `tsc -p jsconfig.json` reports for the package, one message per diagnostic. */
function typeErrors(folder: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(folder, 'jsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (config === undefined) throw new Error('jsconfig.json could not be read');
  const program = ts.createProgram(config.fileNames, config.options);
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}
