/**
 * The two ways to install toolhost without the registry, as a new user would take them, from a
 * fresh copy of this checkout (what `git ls-files` holds, working changes included):
 * - a packed tarball: `npm pack` of the copy (its `prepare` script builds `dist/`), installed into an
 *   empty folder;
 * - a git dependency: `npm install git+file://<copy>`, for which npm clones the repository, installs
 *   its devDependencies and runs `prepare` in the clone before packing it.
 * Then `npx toolhost` runs from each project. One pack and one install per route, shared by the
 * assertions; the registry cache is warm after `npm ci` (`--prefer-offline`).
 *
 * The git route installs every devDependency in npm's clone, and nothing in it depends on the Node
 * line. It runs on the lowest line the package supports (20, the first CI runs), and on any line with
 * TOOLHOST_TEST_GIT_INSTALL=1; the tarball route runs on every line. better-sqlite3's install script
 * in the clone (`prebuild-install || node-gyp rebuild`) is handed this checkout's own build of the
 * addon as a local prebuild (minutes of C compiling otherwise) when that build loads on the Node under
 * test: the script still runs, unpacks it and loads it to check it; otherwise the clone builds it
 * from source as before. Nothing the route proves (npm clones, installs, runs `prepare`) changes.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { arch, platform } from 'node:process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGES, REPO } from './support/cli-run.js';

const run = promisify(execFile);
const INSTALL_TIMEOUT_MS = 600_000;
const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };

let scratch: string;
let localPrebuilds: string;
let source: string;
let tarball: string;
let packedFiles: string[];
let unbuilt: { code: unknown; stdout: string; stderr: string };

/**
 * npm and npx as a user's shell would start them: this test's Node first on PATH (so the installed
 * CLI runs on the Node line under test), none of the `npm_*` settings of an `npm test` that started
 * vitest, and a TMPDIR of the test's own.
 */
function commandEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.toLowerCase().startsWith('npm_')) env[name] = value;
  }
  env['PATH'] = `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}`;
  env['TMPDIR'] = join(scratch, 'tmp');
  env['NO_COLOR'] = '1';
  // prebuild-install's own setting (util.js localPrebuild), read from the environment npm passes on.
  env['npm_config_better_sqlite3_local_prebuilds'] = localPrebuilds;
  return env;
}

async function command(cwd: string, file: string, args: readonly string[]) {
  return run(file, args, {
    cwd,
    env: commandEnv(),
    maxBuffer: 64 * 1024 * 1024,
    timeout: INSTALL_TIMEOUT_MS,
  });
}

/** A command that may fail: its exit code and output, for the assertions. */
async function attempt(cwd: string, file: string, args: readonly string[]) {
  try {
    const { stdout, stderr } = await command(cwd, file, args);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** A copy of the checkout as `git clone` would give it (tracked and untracked-but-not-ignored files), committed. */
async function copyCheckout(into: string): Promise<void> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const path of stdout.split('\0')) {
    if (path === '' || !existsSync(join(REPO, path))) continue;
    mkdirSync(dirname(join(into, path)), { recursive: true });
    cpSync(join(REPO, path), join(into, path), { verbatimSymlinks: true });
  }
  const git = [
    '-c',
    'user.name=toolhost-test',
    '-c',
    'user.email=test@invalid',
    '-c',
    'commit.gpgsign=false',
  ];
  await command(into, 'git', ['init', '-q']);
  await command(into, 'git', [...git, 'add', '-A']);
  await command(into, 'git', [...git, 'commit', '-q', '-m', 'the checkout under test']);
}

/**
 * better-sqlite3's addon as built in this checkout, packed under the name prebuild-install looks for
 * (`{name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz`, glibc's libc being empty).
 */
async function packLocalPrebuild(into: string): Promise<void> {
  mkdirSync(into);
  const addon = join(REPO, 'node_modules/better-sqlite3');
  try {
    // Built for another Node's ABI (npm ci run by another Node), it is no prebuild for this one.
    createRequire(import.meta.url)(join(addon, 'build/Release/better_sqlite3.node'));
  } catch {
    return;
  }
  const { version: addonVersion } = JSON.parse(readFileSync(join(addon, 'package.json'), 'utf8')) as {
    version: string;
  };
  const name = `better-sqlite3-v${addonVersion}-node-v${process.versions.modules}-${platform}-${arch}.tar.gz`;
  await run('tar', ['-czf', join(into, name), '-C', addon, 'build/Release/better_sqlite3.node']);
}

/** An empty project folder, as `mkdir my-agent && cd my-agent` gives. */
function emptyProject(name: string): string {
  const project = join(scratch, name);
  mkdirSync(project);
  return project;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'toolhost-install-'));
  mkdirSync(join(scratch, 'tmp'));
  localPrebuilds = join(scratch, 'prebuilds');
  await packLocalPrebuild(localPrebuilds);
  source = join(scratch, 'toolhost');
  await copyCheckout(source);
  unbuilt = await attempt(source, process.execPath, ['bin/toolhost.js', '--version']);
  // `npm ci` of the copy would fetch what this checkout already has: lend it the same packages.
  // npm pack runs `prepare` in the copy (the build), so this checkout's own dist/ is not touched
  // while other test files use it.
  symlinkSync(join(REPO, 'node_modules'), join(source, 'node_modules'), 'dir');
  const { stdout } = await command(source, 'npm', ['pack', '--json', '--pack-destination', scratch]);
  const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  tarball = join(scratch, packed.filename);
  packedFiles = packed.files.map((file) => file.path);
}, INSTALL_TIMEOUT_MS);

afterAll(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

const GIT_ROUTE =
  process.versions.node.split('.')[0] === '20' || process.env['TOOLHOST_TEST_GIT_INSTALL'] === '1';

describe.each([
  {
    route: 'a packed tarball installed into an empty folder',
    install: (project: string) =>
      command(project, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball]),
  },
  ...(GIT_ROUTE
    ? [
        {
          route: 'a git dependency',
          install: (project: string) =>
            command(project, 'npm', [
              'install',
              '--prefer-offline',
              '--no-audit',
              '--no-fund',
              `git+file://${source}`,
            ]),
        },
      ]
    : []),
])('toolhost installed as $route', ({ route, install }) => {
  let project: string;

  beforeAll(async () => {
    project = emptyProject(route === 'a git dependency' ? 'from-git' : 'from-tarball');
    await install(project);
  }, INSTALL_TIMEOUT_MS);

  it('is built: npx toolhost --version prints the version', async () => {
    expect(existsSync(join(project, 'node_modules/toolhost/dist/src/cli/main.js'))).toBe(true);
    const result = await attempt(project, 'npx', ['--no', '--', 'toolhost', '--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('lists a package', async () => {
    const result = await attempt(project, 'npx', ['--no', '--', 'toolhost', 'list', join(PACKAGES, 'notes')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('notes_add(text, tags?)');
    expect(result.stdout).toContain('2 tools offered, 0 left out');
  });

  it.each(['worker', 'process'])('calls a tool in the %s tier', async (tier) => {
    const result = await attempt(project, 'npx', [
      '--no',
      '--',
      'toolhost',
      'call',
      '--isolation',
      tier,
      join(PACKAGES, 'text-stats'),
      'text_stats',
      '{"text":"One two. Three four five."}',
    ]);
    expect(result).toMatchObject({ code: 0, stdout: '5 words, 2 sentences, 1 line, 25 characters\n' });
  });
});

describe('the tarball', () => {
  it('holds the compiled CLI, library and workers, built by npm pack itself', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'bin/toolhost.js',
        'dist/src/cli/main.js',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/workers/read-declaration.js',
        'dist/workers/call/call-worker.js',
        'dist/workers/call/process-calls.js',
      ]),
    );
    expect(packedFiles.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);
  });
});

describe('a checkout that is not built', () => {
  it('says so, and how to build it, when its command runs', () => {
    expect(unbuilt.code).toBe(1);
    expect(unbuilt.stdout).toBe('');
    expect(unbuilt.stderr).toBe(
      `toolhost: this installation is not built (${join(source, 'dist/src/cli/main.js')} is missing): its "prepare" script builds it; run \`npm run build\` in ${source}/, or reinstall with npm allowed to run toolhost's scripts\n`,
    );
  });
});
