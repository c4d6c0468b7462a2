/**
 * Entries that fetch their server at start (`npx -y <pkg>`, `npm exec`, `pnpm dlx`, `bunx`, and
 * Python's `uvx`, `uv tool run`, `pipx run`). A sandboxed server has no network, so nothing is
 * fetched: a Node package installed where Node resolves it from the config's folder (a
 * `node_modules` there or above, as `npx` finds a local install) is run directly, as `node <its
 * bin>`, like any `node <script>` entry (its package and dependency closure are what the sandbox
 * reads, and what a lock pins). Anything else is left out with a one-line reason saying what to do.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, join, sep } from 'node:path';
import { showHidden } from '../../declaration/visible-text.js';
import { findPackage, isPackageName } from './node-packages.js';
import { isVersion, satisfiesRange } from './version-range.js';

/** What a fetching entry runs instead: `node <bin> <args>`, or why it is left out. */
export type PackageRun =
  | { ok: true; command: string; args: string[] }
  | { ok: false; code: 'SERVER_UNSUPPORTED' | 'DECLARATION_INVALID'; reason: string };

/** A runner's own flags, as it reads them before the package (others are refused, never guessed). */
interface Runner {
  /** How the entry names it (`npx`, `npm exec`). */
  shown: string;
  /** Flags that take no value and change nothing of what runs (`-y`, `--quiet`). */
  plain: readonly string[];
  /** Flags that name the package a command comes from (`-p`, `--package`). */
  package: readonly string[];
  /** Flags after the package are the runner's until `--` (`npm exec`); else they are the server's. */
  flagsUntilSeparator: boolean;
}

const NPX: Omit<Runner, 'shown'> = {
  plain: ['-y', '--yes', '-q', '--quiet', '--silent'],
  package: ['-p', '--package'],
  flagsUntilSeparator: false,
};
const PNPM_DLX: Omit<Runner, 'shown'> = {
  plain: ['-s', '--silent'],
  package: ['--package'],
  flagsUntilSeparator: false,
};
const BUNX: Omit<Runner, 'shown'> = {
  plain: ['--silent'],
  package: ['-p', '--package'],
  flagsUntilSeparator: false,
};
/** The largest package.json read. */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/**
 * What an entry whose `command` fetches its server runs instead, or why it can't run; undefined
 * for any other command (run as written).
 */
export async function packageRunOf(
  command: string,
  args: readonly string[],
  folder: string,
): Promise<PackageRun | undefined> {
  const program = basename(command);
  const python = pythonRunner(program, args);
  if (python !== undefined) {
    const tool = args.slice(python.skip).find((arg) => !arg.startsWith('-')) ?? 'the server';
    return refuse(
      `${python.shown} fetches ${tool} at each start, and a sandboxed server has no network: install it (uv tool install ${tool}, or pipx install ${tool}) and point "command" at the installed program`,
      'SERVER_UNSUPPORTED',
    );
  }
  const runner = nodeRunner(program, args);
  if (runner === undefined) return undefined;
  const parsed = parseRunnerArgs(runner.runner, args.slice(runner.skip));
  if (typeof parsed === 'string') return refuse(parsed);
  return runInstalled(runner.runner.shown, parsed, folder);
}

function nodeRunner(program: string, args: readonly string[]): { runner: Runner; skip: number } | undefined {
  if (program === 'npx') return { runner: { shown: 'npx', ...NPX }, skip: 0 };
  if (program === 'npm' && (args[0] === 'exec' || args[0] === 'x'))
    return { runner: { shown: `npm ${args[0]}`, ...NPX, flagsUntilSeparator: true }, skip: 1 };
  if (program === 'pnpm' && args[0] === 'dlx') return { runner: { shown: 'pnpm dlx', ...PNPM_DLX }, skip: 1 };
  if (program === 'bunx') return { runner: { shown: 'bunx', ...BUNX }, skip: 0 };
  if (program === 'bun' && args[0] === 'x') return { runner: { shown: 'bun x', ...BUNX }, skip: 1 };
  return undefined;
}

function pythonRunner(program: string, args: readonly string[]): { shown: string; skip: number } | undefined {
  if (program === 'uvx') return { shown: 'uvx', skip: 0 };
  if (program === 'uv' && args[0] === 'tool' && args[1] === 'run') return { shown: 'uv tool run', skip: 2 };
  if (program === 'pipx' && args[0] === 'run') return { shown: 'pipx run', skip: 1 };
  return undefined;
}

interface RunnerArgs {
  /** The package spec (`name`, `name@range`). */
  spec: string;
  /** The bin to run (`-p <pkg> <bin>`); undefined: the package's own. */
  bin: string | undefined;
  /** The server's arguments. */
  rest: string[];
}

/** The runner's arguments read as it reads them, or why they can't be. */
function parseRunnerArgs(runner: Runner, args: readonly string[]): RunnerArgs | string {
  const packages: string[] = [];
  let index = 0;
  let separated = false;
  for (; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '--') {
      separated = true;
      index++;
      break;
    }
    if (!arg.startsWith('-')) break;
    if (runner.plain.includes(arg)) continue;
    const packageFlag = runner.package.find((flag) => arg === flag || arg.startsWith(`${flag}=`));
    if (packageFlag !== undefined) {
      const value = arg === packageFlag ? args[++index] : arg.slice(packageFlag.length + 1);
      if (value === undefined || value === '') return `${runner.shown} ${packageFlag} names no package`;
      packages.push(value);
      continue;
    }
    return `${runner.shown} is given the flag "${arg.slice(0, 64)}", which toolhost does not read (it reads ${[...runner.plain, ...runner.package].join(', ')} and --): remove it, or install the server and point "command" at it`;
  }
  const first = args[index];
  if (first === undefined) return `${runner.shown} names no package to run`;
  const rest = args.slice(index + 1);
  if (runner.flagsUntilSeparator && !separated) {
    const separator = rest.indexOf('--');
    const own = separator < 0 ? rest : rest.slice(0, separator);
    const flag = own.find((arg) => arg.startsWith('-'));
    if (flag !== undefined) {
      return `${runner.shown} reads "${flag.slice(0, 64)}" as its own flag: put the server's arguments after --`;
    }
    if (separator >= 0) rest.splice(separator, 1);
  }
  if (packages.length > 1) return `${runner.shown} names ${packages.length} packages: toolhost runs one`;
  return packages.length === 1
    ? { spec: packages[0] ?? '', bin: first, rest }
    : { spec: first, bin: undefined, rest };
}

/** The installed copy of `spec` run as `node <bin>`, or why it can't be. */
async function runInstalled(
  shown: string,
  { spec, bin, rest }: RunnerArgs,
  folder: string,
): Promise<PackageRun> {
  const at = spec.indexOf('@', 1);
  const name = at < 0 ? spec : spec.slice(0, at);
  const range = at < 0 ? '' : spec.slice(at + 1).trim();
  if (!isPackageName(name) || name.includes(':') || name.length > 214) {
    return refuse(
      `${shown} names "${spec.slice(0, 128)}", which is not a package of the npm registry (a path, URL or git spec is not resolved): install it and point "command" at it`,
    );
  }
  const install = `run npm install ${spec} in ${folder} (or npm install --prefix ${folder} ${spec}), then load the config again`;
  const found = await findPackage(folder, name);
  if (found === undefined) {
    return refuse(
      `${shown} would fetch ${name} at each start, and a sandboxed server has no network; it is not installed where Node resolves it from the config's folder: ${install}`,
      'SERVER_UNSUPPORTED',
    );
  }
  const manifest = await readManifest(join(found.real, 'package.json'));
  if (manifest === undefined)
    return refuse(`${name}'s package.json in ${found.path} can't be read: ${install}`);
  const version = typeof manifest['version'] === 'string' ? manifest['version'].slice(0, 64) : '';
  if (range !== '' && range !== 'latest') {
    if (!isVersion(version)) {
      return refuse(
        `${shown} asks for ${name}@${range.slice(0, 64)}, and the copy installed in ${found.path} has no version toolhost can read ("${version}"): ${install}`,
        'SERVER_UNSUPPORTED',
      );
    }
    const satisfied = satisfiesRange(version, range);
    if (satisfied === undefined) {
      return refuse(
        `${shown} asks for ${name}@${range.slice(0, 64)}, which toolhost can't check against the installed ${version} copy (a dist-tag or unreadable range needs the registry): give a version or range, or none to run the installed copy`,
        'SERVER_UNSUPPORTED',
      );
    }
    if (!satisfied) {
      return refuse(
        `${shown} asks for ${name}@${range.slice(0, 64)}, and ${name}@${version} is installed in ${found.path}: ${install}`,
        'SERVER_UNSUPPORTED',
      );
    }
  }
  const bins = binsOf(manifest, typeof manifest['name'] === 'string' ? manifest['name'] : name);
  const picked = pickBin(bins, name, bin);
  if (typeof picked !== 'string') return refuse(`${name}@${version} ${picked.why}`);
  const file = await realpath(join(found.real, picked)).catch(() => undefined);
  if (!file?.startsWith(`${found.real}${sep}`) || !(await stat(file).catch(() => undefined))?.isFile()) {
    return refuse(
      `${name}@${version}'s bin ${picked.slice(0, 128)} is not a file in ${found.path}: ${install}`,
    );
  }
  return { ok: true, command: 'node', args: [file, ...rest] };
}

/** A manifest's bins by name (`"bin": "x.js"` is the bin named like the package, unscoped). */
function binsOf(manifest: Record<string, unknown>, name: string): Map<string, string> {
  const bin = manifest['bin'];
  if (typeof bin === 'string') return new Map([[unscoped(name), bin]]);
  if (typeof bin !== 'object' || bin === null) return new Map();
  return new Map(
    Object.entries(bin).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** The bin npx runs: the one named; else the only one, or the one named like the package. */
function pickBin(
  bins: Map<string, string>,
  name: string,
  wanted: string | undefined,
): string | { why: string } {
  const names = [...bins.keys()].slice(0, 8).join(', ');
  if (wanted !== undefined) {
    return (
      bins.get(wanted) ?? { why: `has no bin named "${wanted.slice(0, 64)}" (its bins: ${names || 'none'})` }
    );
  }
  if (bins.size === 0) return { why: 'has no bin to run' };
  const targets = [...new Set(bins.values())];
  if (targets.length === 1) return targets[0] ?? '';
  return (
    bins.get(unscoped(name)) ?? {
      why: `has several bins (${names}) and none named ${unscoped(name)}: name one, as npx -p ${name} <bin>`,
    }
  );
}

function unscoped(name: string): string {
  return name.replace(/^@[^/]+\//, '');
}

async function readManifest(file: string): Promise<Record<string, unknown> | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || !info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function refuse(
  reason: string,
  code: 'SERVER_UNSUPPORTED' | 'DECLARATION_INVALID' = 'DECLARATION_INVALID',
): PackageRun {
  // Flags, specs and bin names come from the config and the package: a reason stays one visible line.
  return { ok: false, code, reason: showHidden(reason).replace(/\r/g, '\\r').replace(/\n/g, '\\n') };
}
