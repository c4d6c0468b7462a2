/**
 * `toolhost init [dir]`: writes a new tool package (see {@link templateFiles}) that `toolhost
 * selftest` passes at once. It never overwrites anything: every file is checked first, each is
 * created exclusively, and if one can't be written, what was written is removed again.
 */
import { lstat, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { InitArgs } from '../args/command-line.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { messages } from '../ui/messages.js';
import type { CliIo } from '../ui/terminal.js';
import { packageNameFor, TEMPLATE_TOOL, templateFiles } from './init-template.js';

/** The `--json` document. */
export interface InitJson {
  ok: true;
  /** The package folder (absolute). */
  dir: string;
  packageName: string;
  /** The files written, as paths inside the package. */
  files: string[];
}

export async function initCommand(args: InitArgs, io: CliIo): Promise<ExitCode> {
  const root = resolve(args.dir);
  const shown = (path: string) => join(args.dir, path);
  // The folder may be a link to one; a file inside counts as there even as a dangling link.
  if ((await existing(root, stat, args.dir)) === 'other')
    throw new UsageError(messages.initNotAFolder(args.dir));
  const packageName = packageNameFor(basename(root));
  const files = templateFiles({ packageName });
  for (const file of files) {
    if ((await existing(join(root, file.path), lstat, shown(file.path))) !== undefined) {
      throw new UsageError(messages.initWouldOverwrite(shown(file.path)));
    }
  }
  await writeAll(root, files, shown);

  if (args.json) {
    const document: InitJson = { ok: true, dir: root, packageName, files: files.map((file) => file.path) };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    return ExitCode.ok;
  }
  for (const file of files) io.stdout.write(`created ${shown(file.path)}\n`);
  const target = shellWord(args.dir);
  io.stdout.write(
    [
      '',
      'Next:',
      `  npx --no toolhost selftest ${target}`,
      `  npx --no toolhost call ${target} ${TEMPLATE_TOOL.name} '${TEMPLATE_TOOL.exampleArguments}'`,
      '',
    ].join('\n'),
  );
  return ExitCode.ok;
}

/** Writes every file or none: a failure removes the files and folders this run created. */
async function writeAll(
  root: string,
  files: ReturnType<typeof templateFiles>,
  shown: (path: string) => string,
): Promise<void> {
  const created: string[] = [];
  const createdDirs: string[] = [];
  let current = '';
  try {
    for (const file of files) {
      current = file.path;
      const path = join(root, file.path);
      const firstMade = await mkdir(dirname(path), { recursive: true });
      if (firstMade !== undefined) createdDirs.push(firstMade);
      // `wx`: a file that appeared since the check above is not overwritten either.
      await writeFile(path, file.content, { flag: 'wx' });
      created.push(path);
    }
  } catch (error) {
    for (const path of created.reverse()) await rm(path, { force: true });
    for (const dir of createdDirs.reverse()) await rm(dir, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new UsageError(messages.initWouldOverwrite(shown(current)));
    throw new UsageError(messages.initFailed(shown(current), (error as Error).message));
  }
}

/** What is at `path`: a folder, something else, or nothing. A path that can't be looked at is a usage error. */
async function existing(
  path: string,
  look: typeof stat,
  shownPath: string,
): Promise<'dir' | 'other' | undefined> {
  try {
    return (await look(path)).isDirectory() ? 'dir' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(messages.initFailed(shownPath, (error as Error).message));
  }
}

/** The folder as a shell word for the hints (quoted when it holds anything but plain characters). */
function shellWord(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
