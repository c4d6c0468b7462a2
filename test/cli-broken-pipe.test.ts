/**
 * The built `toolhost` command writing into a pipe whose reader goes away early, as in
 * `toolhost selftest pkg | head -1`: the run goes on to its end, its exit code is its own (not 0
 * because the reader left), it cleans up its temp folder, and it prints no stack trace.
 */
import { writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDir, startCli, writePackage } from './support/cli-run.js';

let tmp: ReturnType<typeof freshDir>;
let work: ReturnType<typeof freshDir>;

beforeEach(() => {
  tmp = freshDir('cli-pipe-tmp');
  work = freshDir('cli-pipe-work');
});
afterEach(() => {
  tmp.remove();
  work.remove();
});

const SCHEMA = "export const parameterSchema = { type: 'object' };\nexport function run() { return 'ok'; }\n";

describe('a reader that closes the pipe early', () => {
  it('leaves a failed selftest run its exit code 1, and its temp folder removed', async () => {
    const gate = join(work.path, 'gate');
    // `gated` fails only once the test has closed the pipe (it waits for the gate file), so its
    // result is written into a pipe nobody reads any more.
    const folder = writePackage(work.path, 'piped', {
      'quick.js': `export const name = 'quick';\nexport const description = 'passes at once';\n${SCHEMA}export function selftest() {}\n`,
      'gated.js': `import { existsSync } from 'node:fs';
export const name = 'gated';
export const description = 'fails once the gate file exists';
export const timeoutMs = 600000;
${SCHEMA}export async function selftest() {
  while (!existsSync(process.env.GATE)) await new Promise((resolve) => setTimeout(resolve, 20));
  throw new Error('failed after the reader went away');
}
`,
    });
    const child = startCli(
      ['selftest', '--isolation', 'worker', '--jobs', '2', '--allow-env', 'GATE', folder],
      { tmpDir: tmp.path, cwd: work.path, env: { GATE: gate } },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    // `head -1`: read up to the first line, then close the read end.
    const firstLine = await new Promise<string>((resolve) => {
      let stdout = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
      });
    });
    child.stdout?.destroy();
    // The tier it runs in, or the first result: whichever the command prints first on stdout.
    expect(firstLine).toMatch(/^(isolation: worker|passed {6}quick \(piped\))/);
    // The temp folder of the run is there while it runs.
    expect((await readdir(tmp.path)).some((name) => name.startsWith('toolhost-selftest-'))).toBe(true);
    writeFileSync(gate, '');

    expect(await exited).toBe(1);
    expect(await readdir(tmp.path)).toEqual([]);
    expect(stderr).not.toMatch(/EPIPE|\n {4}at /);
  });
});
