/**
 * The manual's code blocks that claim to run (marked `<!-- runs -->`, see docs/development.md) run,
 * each in a temp folder of its own laid out as a project that installed toolhost: JavaScript (and
 * TypeScript written as plain JavaScript) as an ES module importing `toolhost` (this build),
 * shell with the `toolhost` command (`npx toolhost` finds it in the folder's node_modules), a `$`
 * transcript command by command against the output it shows, and a tool module through `toolhost
 * list`. Blocks that call the Messages API get a local fake of it.
 */
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, childEnv, freshDir, REPO } from './support/cli-run.js';
import { FakeMessagesApi, reply, text, toolUse } from './support/fake-messages-api.js';
import { type RunnableBlock, runnableBlocks, shellLines, transcript } from './support/runnable-blocks.js';

const PAGES = [
  'README.md',
  ...(await readdir(join(REPO, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
];
const BLOCKS: RunnableBlock[] = [];
for (const page of PAGES) BLOCKS.push(...runnableBlocks(page, await readFile(join(REPO, page), 'utf8')));

/** Where a tool module block is read: the strongest tier, as a package you don't trust yet. */
const TOOL_BLOCK_TIER = 'process';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The tier a block names (`isolation: 'process'`, `--isolation strict`), else the default one. */
function tierOf(block: RunnableBlock): string {
  if (block.options.tool) return `the ${TOOL_BLOCK_TIER} tier`;
  const named = /isolation(?::\s*'|\s+)(worker|strict|process)/.exec(block.code);
  return named === null ? 'the default tier' : `the ${named[1]} tier`;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A temp project that installed toolhost: node_modules/toolhost (this checkout), the SDK, the bin. */
async function project(block: RunnableBlock): Promise<string> {
  const folder = freshDir('toolhost-docs-block');
  cleanups.push(folder.remove);
  const modules = join(folder.path, 'node_modules');
  await mkdir(join(modules, '.bin'), { recursive: true });
  await symlink(REPO, join(modules, 'toolhost'), 'dir');
  await symlink(join(REPO, 'node_modules/@anthropic-ai'), join(modules, '@anthropic-ai'), 'dir');
  // What npm writes for a bin whose file isn't executable in the checkout (tsc writes no mode bits).
  const bin = join(modules, '.bin/toolhost');
  await writeFile(bin, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  await chmod(bin, 0o755);
  for (const { from, to } of block.options.copies) {
    await mkdir(dirname(join(folder.path, to)), { recursive: true });
    await cp(join(REPO, from), join(folder.path, to), { recursive: true });
  }
  await mkdir(join(folder.path, 'home'));
  return folder.path;
}

async function environment(block: RunnableBlock, folder: string): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    ...childEnv({ tmpDir: folder }),
    // This Node first, as CI runs each line; npm offline, so `npx` can only find the local bin.
    PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
    HOME: join(folder, 'home'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  const fake = block.options.fakeApi;
  if (fake !== undefined) {
    const api = await FakeMessagesApi.start();
    cleanups.push(async () => {
      // Every conversation the block had: one call of the tool, answered without an error.
      expect(api.requests.length).toBeGreaterThanOrEqual(2);
      for (const request of api.requests.filter((_, index) => index % 2 === 1)) {
        expect(request.body.messages.at(-1)?.content).toEqual([
          expect.objectContaining({
            type: 'tool_result',
            content: [expect.objectContaining({ type: 'text' })],
          }),
        ]);
        expect(JSON.stringify(request.body.messages.at(-1))).not.toContain('"is_error":true');
      }
      await api.close();
    });
    for (let conversation = 0; conversation < 5; conversation += 1)
      api.script(reply([toolUse(fake.tool, fake.input)]), reply([text('Done.')]));
    env['ANTHROPIC_BASE_URL'] = api.baseURL;
    env['ANTHROPIC_API_KEY'] = 'key-for-the-local-fake-api';
  }
  return env;
}

async function runModule(block: RunnableBlock, folder: string, env: Record<string, string>): Promise<Ran> {
  await writeFile(join(folder, 'block.mjs'), block.code);
  return run(process.execPath, ['block.mjs'], folder, env);
}

async function runToolModule(
  block: RunnableBlock,
  folder: string,
  env: Record<string, string>,
): Promise<Ran> {
  const tools = join(folder, 'tools');
  await mkdir(tools, { recursive: true });
  await writeFile(join(tools, 'block.js'), block.code);
  // What the block imports is copied into node_modules (`with`); a package declares it, or its
  // snapshot doesn't hold it (docs/writing-tools.md).
  const dependencies = Object.fromEntries(
    block.options.copies
      .filter(({ to }) => to.startsWith('node_modules/'))
      .map(({ to }) => [to.slice('node_modules/'.length), '*']),
  );
  const manifest = {
    name: 'docs-block',
    type: 'module',
    dependencies,
    toolhost: { tools: ['./tools/block.js'] },
  };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return run(process.execPath, [CLI, 'list', '--isolation', TOOL_BLOCK_TIER, '.'], folder, env);
}

async function runShell(block: RunnableBlock, folder: string, env: Record<string, string>): Promise<Ran> {
  const steps = transcript(block.code);
  if (steps.length === 0) {
    const script = ['set -e', ...shellLines(block.code, block.options.skip)].join('\n');
    return run('/bin/sh', ['-c', script], folder, env);
  }
  let last: Ran = { code: 0, stdout: '', stderr: '' };
  for (const [index, step] of steps.entries()) {
    last = await run('/bin/sh', ['-c', step.command], folder, env);
    if (index < steps.length - 1) expect(last.code, `${step.command}\n${last.stderr}`).toBe(0);
    if (!block.options.outputVaries)
      expect(last.stdout.trimEnd().split('\n'), step.command).toEqual(step.output);
  }
  return last;
}

describe('the runnable blocks of README.md and docs/', () => {
  it('include the README quick start and its examples', () => {
    const readme = BLOCKS.filter((block) => block.file === 'README.md');
    expect(readme.length).toBeGreaterThanOrEqual(4);
    expect(readme.some((block) => block.code.includes('npx toolhost selftest fixtures/packages/*'))).toBe(
      true,
    );
  });

  it.each(
    BLOCKS.map(
      (block) => [`${block.file}:${block.line} (${block.language}, ${tierOf(block)})`, block] as const,
    ),
  )('%s runs as the manual says', async (_name, block) => {
    const folder = await project(block);
    const env = await environment(block, folder);
    const ran = block.options.tool
      ? await runToolModule(block, folder, env)
      : ['js', 'ts', 'mjs', 'javascript', 'typescript'].includes(block.language)
        ? await runModule(block, folder, env)
        : await runShell(block, folder, env);
    expect(ran.code, `stdout:\n${ran.stdout}\nstderr:\n${ran.stderr}`).toBe(block.options.exit);
    for (const expected of block.options.prints) expect(ran.stdout).toContain(expected);
    if (block.options.tool) expect(ran.stdout).toMatch(/^ {2}✓ /m);
  });
});
