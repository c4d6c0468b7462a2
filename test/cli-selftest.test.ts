/**
 * The built `toolhost selftest`: results per tool, the summary table, --json, exit codes, fresh
 * tmpDirs that are gone afterwards (also after a crash, an exit, a timeout or Ctrl-C), and writes
 * outside the tmpDirs detected and reported.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, childEnv, freshDir, PACKAGES, runCli, startCli, writePackage } from './support/cli-run.js';

let tmp: ReturnType<typeof freshDir>;
let work: ReturnType<typeof freshDir>;

beforeEach(() => {
  tmp = freshDir('cli-selftest-tmp');
  work = freshDir('cli-selftest-work');
});
afterEach(() => {
  tmp.remove();
  work.remove();
});

const run = (args: string[]) => runCli(['selftest', ...args], { tmpDir: tmp.path, cwd: work.path });

interface ResultRow {
  tool: string | null;
  package: string;
  status: string;
  durationMs: number | null;
  error?: { code: string; message: string };
}

/** tool → status (and error code), the parts of a row that don't depend on timing. */
function verdicts(rows: ResultRow[]): Array<[string | null, string, string?]> {
  return rows.map((row) =>
    row.error === undefined ? [row.tool, row.status] : [row.tool, row.status, row.error.code],
  );
}

const GOOD = ['unit-converter', 'text-stats', 'png-badge', 'notes'].map((name) => join(PACKAGES, name));

describe('toolhost selftest on the example packages', () => {
  it('passes every good package: a plain line per tool, a summary table, exit 0, TMPDIR left empty', async () => {
    const result = await run(GOOD);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    const finished = lines
      .filter((line) => line.startsWith('passed      '))
      .map((line) => line.split(' (')[0]);
    expect(finished.sort()).toEqual(
      ['convert_length', 'convert_temperature', 'notes_add', 'notes_search', 'png_badge', 'text_stats'].map(
        (tool) => `passed      ${tool}`,
      ),
    );
    const table = lines.slice(lines.indexOf('') + 1);
    expect(table[0]).toMatch(/^TOOL +PACKAGE +RESULT +TIME +REASON$/);
    expect(table.slice(1, 7).map((line) => line.split(/ +/).slice(0, 3))).toEqual([
      ['convert_length', 'unit-converter', 'passed'],
      ['convert_temperature', 'unit-converter', 'passed'],
      ['text_stats', 'text-stats', 'passed'],
      ['png_badge', 'png-badge', 'passed'],
      ['notes_add', 'notes', 'passed'],
      ['notes_search', 'notes', 'passed'],
    ]);
    expect(result.stdout.endsWith('\n6 tools: 6 passed, 0 failed, 0 without a selftest, 0 left out\n')).toBe(
      true,
    );
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('reports every way the mixed bag fails, with --json, and exits 1', async () => {
    // The worker tier, where a write outside the tmpDir happens and is looked for (a sandbox refuses it).
    const result = await run([
      '--json',
      '--isolation',
      'worker',
      join(PACKAGES, 'mixed-bag'),
      join(PACKAGES, 'notes'),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const document = JSON.parse(result.stdout);
    expect(document.ok).toBe(false);
    expect(document.counts).toEqual({ passed: 3, failed: 5, noSelftest: 1, leftOut: 1 });
    expect(verdicts(document.results)).toEqual([
      ['busy_wait', 'failed', 'TOOL_TIMEOUT'],
      ['cache_warmer', 'failed', 'WROTE_OUTSIDE_TMPDIR'],
      [null, 'left-out', 'DECLARATION_INVALID'],
      ['memory_hog', 'failed', 'TOOL_OUT_OF_MEMORY'],
      ['reverse_text', 'passed'],
      ['self_destruct', 'failed', 'TOOL_EXITED'],
      ['shout', 'no-selftest'],
      ['word_count', 'failed', 'TOOL_THREW'],
      ['notes_add', 'passed'],
      ['notes_search', 'passed'],
    ]);
    const byTool = new Map(document.results.map((row: ResultRow) => [row.tool, row]));
    expect(byTool.get('word_count')).toMatchObject({
      package: 'mixed-bag',
      error: { message: 'expected 3 words in "two  spaces between", got 4' },
    });
    expect(byTool.get('busy_wait')).toMatchObject({ error: { message: 'tool timed out after 1000 ms' } });
    expect(byTool.get('shout')).toMatchObject({ durationMs: null });
    expect(document.results[2]).toMatchObject({
      module: join(PACKAGES, 'mixed-bag', 'tools', 'fetch-page.js'),
      error: { message: 'tools/fetch-page.js:2:14: name must match ^[a-zA-Z0-9_-]{1,64}$, got "fetch page"' },
    });
    // Selftests run side by side, so the write is traced by running each again on its own.
    expect(document.writesOutsideTmpDir).toHaveLength(1);
    expect(document.writesOutsideTmpDir[0]).toMatchObject({
      place: 'working-directory',
      change: 'created',
      tool: 'cache_warmer',
      suspects: [],
    });
    expect(byTool.get('cache_warmer')).toMatchObject({
      error: { message: 'created ./cache/ in the working directory' },
    });
    expect(document.writesOutsideTmpDir[0].path.endsWith('/cwd/cache')).toBe(true);
    expect(document.tmpDirsLeft).toEqual([]);
    expect(readdirSync(tmp.path)).toEqual([]);
  }, 120_000);
});

describe('tmpDirs of selftests', () => {
  const tmpDirUser = (name: string, then: string) => `import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
export const name = '${name}';
export const description = 'Uses its tmpDir';
export const parameterSchema = { type: 'object' };
export const timeoutMs = 1500;
export function run() { return 'ok'; }
export async function selftest(ctx) {
  if (readdirSync(ctx.tmpDir).length !== 0) throw new Error('the tmpDir was not fresh');
  writeFileSync(join(ctx.tmpDir, 'state.json'), '{}');
  ${then}
}
`;

  it('each selftest gets a fresh tmpDir, and none is left after a pass, a throw, an exit, a crash or a timeout', async () => {
    const folder = writePackage(work.path, 'tmpdir-users', {
      'a-passes.js': tmpDirUser('passes', ''),
      'b-passes-too.js': tmpDirUser('passes_too', ''),
      'c-throws.js': tmpDirUser('throws', "throw new Error('no');"),
      'd-exits.js': tmpDirUser('exits', 'process.exit(7);'),
      'e-crashes.js': tmpDirUser(
        'crashes',
        "setImmediate(() => { throw new Error('boom'); }); await new Promise(() => {});",
      ),
      'f-loops.js': tmpDirUser('loops', 'for (;;) {}'),
    });
    const result = await run(['--json', '--jobs', '3', folder]);
    expect(result.code).toBe(1);
    const document = JSON.parse(result.stdout);
    expect(verdicts(document.results)).toEqual([
      ['passes', 'passed'],
      ['passes_too', 'passed'],
      ['throws', 'failed', 'TOOL_THREW'],
      ['exits', 'failed', 'TOOL_EXITED'],
      ['crashes', 'failed', 'TOOL_CRASHED'],
      ['loops', 'failed', 'TOOL_TIMEOUT'],
    ]);
    expect(document.tmpDirsLeft).toEqual([]);
    expect(document.writesOutsideTmpDir).toEqual([]);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('--timeout caps a selftest that would run far longer, and its worker is ended', async () => {
    const folder = writePackage(work.path, 'slow', {
      'slow.js': `export const name = 'slow';
export const description = 'Takes its time';
export const parameterSchema = { type: 'object' };
export const timeoutMs = 600000;
export function run() { return 'ok'; }
export function selftest(ctx) { void ctx.tmpDir; for (;;) {} }
`,
    });
    const result = await run(['--json', '--timeout', '500', folder]);
    expect(result.code).toBe(1);
    const [row] = JSON.parse(result.stdout).results;
    expect(row.status).toBe('failed');
    expect(row.error.code).toBe('TOOL_TIMEOUT');
    expect(row.error.message).toMatch(/timed out after 500 ms$/);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('Ctrl-C stops the run, ends the workers and removes every temp dir (exit 130)', async () => {
    // `waits` holds its tmpDir and never ends: once its file is under the host's tmp root, a
    // selftest is running with its tmpDir in place. (Calls of a package in the process tier may run
    // in processes that see different tmp folders: the test looks from outside.)
    const folder = writePackage(work.path, 'interrupted', {
      'a-waits.js': `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
export const name = 'waits';
export const description = 'Waits forever';
export const parameterSchema = { type: 'object' };
export const timeoutMs = 600000;
export function run() { return 'ok'; }
export async function selftest(ctx) {
  writeFileSync(join(ctx.tmpDir, 'holding'), '');
  await new Promise(() => {});
}
`,
    });
    const child = startCli(['selftest', '--jobs', '2', folder], { tmpDir: tmp.path, cwd: work.path });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    await holdingUnder(tmp.path);
    expect(readdirSync(tmp.path)).toHaveLength(1);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    expect(stderr).toBe('toolhost: interrupted; the selftests were stopped and their temp dirs removed\n');
    expect(readdirSync(tmp.path)).toEqual([]);
  });
});

describe('writes outside the tmpDir', () => {
  const litter = `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
export const name = 'litter';
export const description = 'Writes where it should not';
export const parameterSchema = { type: 'object' };
export function run() { return 'ok'; }
export function selftest(ctx) {
  writeFileSync(new URL('../left-in-package.txt', import.meta.url), 'x');
  writeFileSync('left-in-cwd.txt', 'x');
  writeFileSync(join(ctx.dataDir, 'left-in-data.txt'), 'x');
}
`;
  const tidy = `export const name = 'tidy';
export const description = 'Keeps to its tmpDir';
export const parameterSchema = { type: 'object' };
export function run() { return 'ok'; }
export function selftest(ctx) { return import('node:fs').then((fs) => fs.writeFileSync(ctx.tmpDir + '/ok', 'x')); }
`;

  it('are detected in the package, the working directory and the dataDir, and fail the selftest that made them', async () => {
    const folder = writePackage(work.path, 'careless', { 'litter.js': litter, 'tidy.js': tidy });
    const result = await run(['--json', '--isolation', 'worker', '--jobs', '1', folder]);
    expect(result.code).toBe(1);
    const document = JSON.parse(result.stdout);
    expect(verdicts(document.results)).toEqual([
      ['litter', 'failed', 'WROTE_OUTSIDE_TMPDIR'],
      ['tidy', 'passed'],
    ]);
    expect(
      document.writesOutsideTmpDir.map(
        (write: { path: string; place: string; change: string; tool: string }) => [
          write.path.slice(write.path.lastIndexOf('/') + 1),
          write.place,
          write.change,
          write.tool,
        ],
      ),
    ).toEqual(
      [
        ['left-in-package.txt', 'package', 'created', 'litter'],
        ['left-in-cwd.txt', 'working-directory', 'created', 'litter'],
        ['left-in-data.txt', 'data-dir', 'created', 'litter'],
      ].sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? '')),
    );
    expect(document.results[0].error.message).toContain(
      `created ${join(folder, 'left-in-package.txt')} in its package`,
    );
    expect(document.results[0].error.message).toContain('created ./left-in-cwd.txt in the working directory');
    expect(document.results[0].error.message).toContain('created ./left-in-data.txt in the dataDir');
    // Detected, not prevented: it went to the host's snapshot of the package (where the module ran
    // from), which is gone with the scratch folders; the package itself is untouched.
    expect(existsSync(join(folder, 'left-in-package.txt'))).toBe(false);
    expect(existsSync(join(work.path, 'left-in-cwd.txt'))).toBe(false);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('show in the summary table and fail the run in text mode too', async () => {
    const folder = writePackage(work.path, 'careless', { 'litter.js': litter });
    const result = await run(['--isolation', 'worker', '--jobs', '1', folder]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^litter +careless +FAILED +\S+ m?s +WROTE_OUTSIDE_TMPDIR: created /m);
  });
});

describe('bounds', () => {
  it('--heap-mb bounds each selftest worker’s heap', async () => {
    const folder = writePackage(work.path, 'hungry', {
      'hog.js': `export const name = 'hog';
export const description = 'Allocates without end';
export const parameterSchema = { type: 'object' };
export function run() { return 'ok'; }
export function selftest() { const hoard = []; for (;;) hoard.push(new Array(100000).fill(Math.random())); }
`,
    });
    const result = await run(['--json', '--heap-mb', '48', folder]);
    expect(result.code).toBe(1);
    const [row] = JSON.parse(result.stdout).results;
    expect(row).toMatchObject({
      tool: 'hog',
      status: 'failed',
      error: { code: 'TOOL_OUT_OF_MEMORY', message: 'the tool ran out of memory (heap limit 48 MB)' },
    });
    expect(readdirSync(tmp.path)).toEqual([]);
  });
});

describe('what counts as a pass', () => {
  it('a tool without a selftest is "no selftest", not a pass; --require-selftests fails it, in the table and the counts alike', async () => {
    const folder = writePackage(work.path, 'untested', {
      'bare.js': `export const name = 'bare';
export const description = 'No selftest';
export const parameterSchema = { type: 'object' };
export function run() { return 'ok'; }
`,
    });
    const lenient = await run([folder]);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toContain('no selftest bare (untested)\n');
    expect(lenient.stdout).toContain('1 tool: 0 passed, 0 failed, 1 without a selftest, 0 left out\n');

    const strict = await run(['--require-selftests', '--json', folder]);
    expect(strict.code).toBe(1);
    const document = JSON.parse(strict.stdout);
    expect(document).toMatchObject({
      ok: false,
      counts: { passed: 0, failed: 1, noSelftest: 0, leftOut: 0 },
    });
    expect(verdicts(document.results)).toEqual([['bare', 'failed', 'NO_SELFTEST']]);

    const text = await run(['--require-selftests', folder]);
    expect(text.code).toBe(1);
    const reason = 'NO_SELFTEST: the tool has no selftest, and --require-selftests asks for one';
    expect(text.stdout).toContain(`FAILED      bare (untested): ${reason}\n`);
    expect(text.stdout).toMatch(new RegExp(`\\nbare +untested +FAILED +- +${reason}\\n`));
    expect(text.stdout.endsWith('\n1 tool: 0 passed, 1 failed, 0 without a selftest, 0 left out\n')).toBe(
      true,
    );
  });

  it('a listed module outside its package fails the run, shown by its absolute path', async () => {
    const outside = join(work.path, 'outside.js');
    writeFileSync(outside, 'export const name = "far";');
    const folder = writePackage(work.path, 'reaching', {});
    writeFileSync(
      join(folder, 'package.json'),
      JSON.stringify({ name: 'reaching', type: 'module', toolhost: { tools: ['../outside.js'] } }),
    );
    const result = await run([folder]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`left out    ${outside} (reaching): MODULE_OUTSIDE_PACKAGE: `);
    expect(result.stdout).toMatch(new RegExp(`\\n${outside.replaceAll('/', '\\/')} +reaching +left out `));
  });

  it('a module that could not be read fails the run', async () => {
    const folder = writePackage(work.path, 'unreadable', {
      'broken.js': 'export const name = ;',
      'fine.js': `export const name = 'fine';
export const description = 'Fine';
export const parameterSchema = { type: 'object' };
export function run() { return 'ok'; }
export function selftest() {}
`,
    });
    const result = await run(['--json', folder]);
    expect(result.code).toBe(1);
    expect(verdicts(JSON.parse(result.stdout).results)).toEqual([
      [null, 'left-out', 'IMPORT_FAILED'],
      ['fine', 'passed'],
    ]);
  });
});

describe('on a terminal', () => {
  // util-linux `script` gives the command a pseudo-terminal, as a user's shell would.
  const hasScript = spawnSync('script', ['--version']).status === 0;
  const onTerminal = (env: Record<string, string>) =>
    new Promise<{ code: number | null; transcript: string }>((resolve) => {
      const command = [process.execPath, CLI, 'selftest', join(PACKAGES, 'unit-converter')]
        .map((word) => JSON.stringify(word))
        .join(' ');
      const child = execFile(
        'script',
        ['-qec', command, '/dev/null'],
        { cwd: work.path, env: childEnv({ tmpDir: tmp.path, env }), timeout: 120_000 },
        (_error, stdout) => resolve({ code: child.exitCode, transcript: stdout }),
      );
    });

  it.skipIf(!hasScript)(
    'shows a spinner while selftests run and a line per tool as each finishes',
    async () => {
      const { code, transcript } = await onTerminal({});
      expect(code).toBe(0);
      expect(transcript).toMatch(/⠋ 0\/2 done · running convert_length/);
      expect(transcript).toContain('\r\u001b[K');
      expect(transcript).toMatch(/✓ convert_length unit-converter [\d.]+ m?s\r?\n/);
      expect(transcript).toMatch(/✓ convert_temperature unit-converter [\d.]+ m?s\r?\n/);
      expect(transcript).toMatch(/TOOL +PACKAGE +RESULT +TIME +REASON/);
      expect(readdirSync(tmp.path)).toEqual([]);
    },
  );

  it.skipIf(!hasScript)('prints plain lines in CI, even on a terminal', async () => {
    const { code, transcript } = await onTerminal({ CI: 'true' });
    expect(code).toBe(0);
    expect(transcript).not.toContain('\u001b[K');
    expect(transcript).toMatch(/^passed {6}convert_length \(unit-converter\) [\d.]+ m?s\r?$/m);
  });
});

/** Resolves once a file named `holding` is somewhere under `root` (a selftest made it in its tmpDir). */
async function holdingUnder(root: string): Promise<void> {
  const found = () => {
    try {
      return readdirSync(root, { recursive: true }).some((name) => String(name).endsWith('holding'));
    } catch {
      // A folder went while it was listed.
      return false;
    }
  };
  while (!found()) await delay(10);
}
