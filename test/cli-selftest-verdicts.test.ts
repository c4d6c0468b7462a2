/**
 * What a `toolhost selftest` verdict rests on, against selftests that try to bend it: a write is
 * pinned on the selftest that makes it again when it runs on its own (never on a file time, which a
 * tool sets), a process a selftest leaves running is ended before the last look and fails it, and
 * without `--isolation` the run takes the strongest tier the machine has and says which.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDir, runCli, writePackage } from './support/cli-run.js';

let tmp: ReturnType<typeof freshDir>;
let work: ReturnType<typeof freshDir>;

beforeEach(() => {
  tmp = freshDir('cli-verdicts-tmp');
  work = freshDir('cli-verdicts-work');
});
afterEach(() => {
  tmp.remove();
  work.remove();
});

interface Row {
  tool: string | null;
  status: string;
  error?: { code: string; message: string };
}

interface Verdict {
  ok: boolean;
  isolation: { tier: string; sandboxed: boolean; chosen: boolean };
  results: Row[];
  writesOutsideTmpDir: Array<{ path: string; tool: string | null; suspects: string[] }>;
  processesLeft: Array<{ pid: number; command: string }>;
  tmpDirsLeft: string[];
}

async function selftest(args: string[]): Promise<{ code: number | null; verdict: Verdict; stderr: string }> {
  const result = await runCli(['selftest', '--json', ...args], { tmpDir: tmp.path, cwd: work.path });
  return { code: result.code, verdict: JSON.parse(result.stdout) as Verdict, stderr: result.stderr };
}

const byTool = (verdict: Verdict) =>
  Object.fromEntries(verdict.results.map((row) => [row.tool, [row.status, row.error?.code ?? null]]));

const tool = (name: string, selftestBody: string, imports = '') => `${imports}
export const name = '${name}';
export const description = 'A selftest that ${name}';
export const parameterSchema = { type: 'object' };
export function run() { return 'ok'; }
export async function selftest(ctx) {
${selftestBody}
}
`;

const tidy = tool('tidy', "  (await import('node:fs')).writeFileSync(ctx.tmpDir + '/ok', 'x');");

/** Every process still alive whose command line holds `marker`. */
function processesNaming(marker: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        return command.includes(marker) ? [command] : [];
      } catch {
        return [];
      }
    });
}

describe.each(['worker', 'strict', 'process'])('with --isolation %s', (tier) => {
  it('a selftest that forges its write’s time to fall in another selftest’s run is the one that fails, and the other passes', async () => {
    const folder = join(work.path, 'planter');
    const planted = join(folder, 'planted.txt');
    writePackage(work.path, 'planter', {
      // It writes into the package and dates the file 1.2 s ahead, into `innocent`'s run.
      'a-plants.js': tool(
        'plants',
        `  writeFileSync(${JSON.stringify(planted)}, 'x');
  const later = new Date(Date.now() + 1200);
  utimesSync(${JSON.stringify(planted)}, later, later);`,
        "import { utimesSync, writeFileSync } from 'node:fs';",
      ),
      // Runs beside it past that time, writing nothing outside its tmpDir.
      'b-innocent.js': tool('innocent', '  await new Promise((resolve) => setTimeout(resolve, 1500));'),
    });
    const other = writePackage(work.path, 'other', { 'tidy.js': tidy });

    const { code, verdict } = await selftest(['--isolation', tier, '--jobs', '2', folder, other]);

    expect(code).toBe(1);
    expect(verdict.isolation).toMatchObject({ tier, chosen: true });
    const blocked =
      tier === 'strict' ? 'TOOL_ACCESS_DENIED' : verdict.isolation.sandboxed ? 'TOOL_THREW' : null;
    expect(byTool(verdict)).toEqual({
      plants: ['failed', blocked ?? 'WROTE_OUTSIDE_TMPDIR'],
      innocent: ['passed', null],
      tidy: ['passed', null],
    });
    if (blocked === null) {
      // Detected, not prevented: the write happened, and it is pinned on the one that made it.
      expect(existsSync(planted)).toBe(true);
      expect(verdict.writesOutsideTmpDir).toEqual([
        expect.objectContaining({ path: planted, tool: 'plants', suspects: [] }),
      ]);
    } else {
      expect(existsSync(planted)).toBe(false);
      expect(verdict.writesOutsideTmpDir).toEqual([]);
    }
    expect(verdict.tmpDirsLeft).toEqual([]);
    expect(readdirSync(tmp.path)).toEqual([]);
  });

  it('a selftest that leaves a detached late writer behind fails, the writer is ended, and its file never appears', async () => {
    const folder = join(work.path, 'lingers');
    const late = join(folder, 'late-write.txt');
    // Long enough that a writer still alive when the run has ended is found alive below.
    const script = `sleep 30; echo late > ${late}`;
    writePackage(work.path, 'lingers', {
      'lingers.js': tool(
        'lingers',
        `  spawn('sh', ['-c', ${JSON.stringify(script)}], { detached: true, stdio: 'ignore' }).unref();`,
        "import { spawn } from 'node:child_process';",
      ),
    });
    const other = writePackage(work.path, 'other', { 'tidy.js': tidy });

    const { code, verdict } = await selftest(['--isolation', tier, folder, other]);

    expect(code).toBe(1);
    if (tier === 'strict') {
      expect(byTool(verdict)).toEqual({ lingers: ['failed', 'TOOL_ACCESS_DENIED'], tidy: ['passed', null] });
      expect(verdict.processesLeft).toEqual([]);
    } else {
      expect(byTool(verdict)).toEqual({ lingers: ['failed', 'LEFT_PROCESSES'], tidy: ['passed', null] });
      const row = verdict.results.find((result) => result.tool === 'lingers');
      expect(row?.error?.message).toMatch(
        /^left \d+ process(es)? running after it answered \(ended\): \d+ sh -c sleep 30; echo late > /,
      );
      expect(verdict.processesLeft.some((left) => left.command.includes(script))).toBe(true);
    }
    // The run has ended: had the writer outlived it, it would still be sleeping now.
    expect(processesNaming(late)).toEqual([]);
    expect(existsSync(late)).toBe(false);
    expect(readdirSync(tmp.path)).toEqual([]);
  });
});

describe('in the process tier with bubblewrap', () => {
  const hasBwrap = spawnSync('bwrap', ['--version']).status === 0;

  it.runIf(hasBwrap)(
    'a late writer that double-forks out of its selftest’s process tree is still found in the package’s pid namespace, and ended',
    async () => {
      const folder = join(work.path, 'orphans');
      const late = join(folder, 'late-write.txt');
      // The subshell's parent exits at once: the writer is an orphan, adopted by the sandbox's pid 1.
      const script = `(sleep 30; echo late > ${late}) &`;
      writePackage(work.path, 'orphans', {
        'orphans.js': tool(
          'orphans',
          `  await new Promise((resolve) => spawn('sh', ['-c', ${JSON.stringify(script)}], { stdio: 'ignore' }).on('exit', resolve));`,
          "import { spawn } from 'node:child_process';",
        ),
      });

      const { code, verdict } = await selftest(['--isolation', 'process', folder]);

      expect(code).toBe(1);
      expect(verdict.isolation.sandboxed).toBe(true);
      expect(byTool(verdict)).toEqual({ orphans: ['failed', 'LEFT_PROCESSES'] });
      expect(verdict.processesLeft.some((left) => left.command.includes(late))).toBe(true);
      expect(processesNaming(late)).toEqual([]);
      expect(existsSync(late)).toBe(false);
    },
  );
});

describe('without --isolation', () => {
  it('runs in the strongest tier this machine has and says which, in --json and on the first line', async () => {
    const other = writePackage(work.path, 'other', { 'tidy.js': tidy });
    const { code, verdict } = await selftest([other]);
    expect(code).toBe(0);
    expect(verdict.isolation.chosen).toBe(false);
    expect(verdict.isolation.tier).toBe('process');

    const text = await runCli(['selftest', other], { tmpDir: tmp.path, cwd: work.path });
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(
      verdict.isolation.sandboxed
        ? 'isolation: process (the strongest here): a process per package, in a bubblewrap sandbox: writes outside the tmpDir are refused, and every process a selftest starts is ended with it'
        : "isolation: process (the strongest here): a process per package, under Node's permission model with strict's grants: writes outside the tmpDir and child processes are refused",
    );
  });
});
