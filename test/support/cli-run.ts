/**
 * Runs the built `toolhost` command as a user would: `node dist/src/cli/main.js ...` in a child
 * process, with its working directory, environment and TMPDIR under the test's control.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = join(REPO, 'dist/src/cli/main.js');
export const PACKAGES = join(REPO, 'fixtures/packages');

if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before these tests`);

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /**
   * The tier a hosting command runs in: `worker` (added as `--isolation worker` unless the command
   * line names a tier) for the suites that don't test the tier, so they stay as fast as they were;
   * `default` for the suites of the default itself. `selftest` always keeps its own default.
   * @default 'worker'
   */
  isolation?: 'worker' | 'default';
  /** Added to the child's minimal environment (PATH, TMPDIR, NO_COLOR, the suite's TOOLHOST_CACHE_DIR). */
  env?: Record<string, string>;
  /** The child's TMPDIR. */
  tmpDir: string;
  input?: string;
}

export function childEnv(options: RunOptions): Record<string, string> {
  // The suite's own store (global-setup.ts), unless the test names one.
  const store = process.env['TOOLHOST_CACHE_DIR'];
  return {
    PATH: process.env['PATH'] ?? '',
    TMPDIR: options.tmpDir,
    NO_COLOR: '1',
    ...(store === undefined ? {} : { TOOLHOST_CACHE_DIR: store }),
    ...options.env,
  };
}

/** The commands whose tier {@link RunOptions.isolation} sets (selftest's default is its suites' concern). */
const TIER_COMMANDS = new Set(['list', 'call', 'chat', 'serve', 'pin']);

/** `args` with `--isolation worker` after the command, unless it names a tier or the default is wanted. */
export function withTier(args: readonly string[], isolation: RunOptions['isolation'] = 'worker'): string[] {
  const [command, ...rest] = args;
  const namesTier = args.some((arg) => arg === '--isolation' || arg.startsWith('--isolation='));
  if (command === undefined || !TIER_COMMANDS.has(command) || namesTier || isolation === 'default') {
    return [...args];
  }
  return [command, '--isolation', 'worker', ...rest];
}

export function runCli(args: readonly string[], options: RunOptions): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...withTier(args, options.isolation)],
      { cwd: options.cwd ?? REPO, env: childEnv(options), timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, signal: child.signalCode, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** Starts the command and hands back the child, for tests that talk to it while it runs. */
export function startCli(args: readonly string[], options: RunOptions): ChildProcess {
  return spawn(process.execPath, [CLI, ...withTier(args, options.isolation)], {
    cwd: options.cwd ?? REPO,
    env: childEnv(options),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A fresh folder (its real path), removed by the returned cleanup. */
export function freshDir(prefix: string): { path: string; remove(): void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), `${prefix}-`)));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The one line a usage error prints: exactly one line on stderr, nothing on stdout. */
export function stderrLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => line !== '');
}

/** Writes a tool package (package.json listing `modules`, each a file under tools/) into `root/name`. */
export function writePackage(root: string, name: string, modules: Record<string, string>): string {
  const folder = join(root, name);
  mkdirSync(join(folder, 'tools'), { recursive: true });
  const tools = Object.keys(modules).map((file) => `./tools/${file}`);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, type: 'module', toolhost: { tools } }));
  for (const [file, source] of Object.entries(modules)) writeFileSync(join(folder, 'tools', file), source);
  return folder;
}
