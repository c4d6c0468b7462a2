/**
 * What an MCP server's sandbox holds: the program it runs (its real path), for a Node script the
 * script's package and that package's dependencies (found the way Node finds them), its `read`
 * grants read-only, its `write` grants and a tmp folder of its own read-write. Nothing else of the
 * host's files: not its home, not the config's folder, not the working directory.
 */
import { open, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { findOnPath, type SandboxPaths } from '../../process/sandbox/sandbox.js';
import type { ServerEntry } from './config.js';
import { findPackage, isPackageName } from './node-packages.js';

/** What a server's process is started with, inside bubblewrap. */
export interface ServerPlan {
  /** The program, by its real path. */
  command: string;
  args: string[];
  /** Everything bubblewrap binds, but the tmp folder (given when the process starts). */
  paths: Omit<SandboxPaths, 'tmpDir'>;
  /** `PATH` inside the sandbox: the interpreter's folder, then the system's. */
  path: string;
  /** The package folders among `paths.readOnly`: the script's package and its dependencies. */
  packages: string[];
  /** The program is Node (or a script whose `#!` names Node): its proxy comes through Node's agents. */
  node: boolean;
}

/** The most packages one server's dependency closure may hold (real servers have a few hundred). */
const MAX_PACKAGES = 5000;
/** A manifest larger than this is not read for dependencies. */
const MAX_MANIFEST_BYTES = 1024 * 1024;
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
/** A Node binary's name (`node`, `nodejs`, `node20`). */
const NODE_PROGRAM = /^node(?:js)?[0-9.]*$/;
/** An argument that is a script its interpreter runs: its package and dependencies are granted. */
const SCRIPT_FILE = /\.(?:c|m)?js$/;

/** The plan for `entry`, or why it can't be run (a command that is not found, say). */
export async function planServer(entry: ServerEntry, hostPath: string): Promise<ServerPlan | string> {
  const found = entry.command.includes('/')
    ? resolve(entry.folder, entry.command)
    : findOnPath(entry.command, hostPath);
  if (found === undefined) {
    return `its command "${entry.command}" is not on the PATH (give its full path in "command")`;
  }
  const command = await realpath(found).catch(() => undefined);
  if (command === undefined) return `its command ${found} does not exist`;
  const code = new Set<string>([command]);
  const readOnly = new Set<string>(entry.read);
  const interpreterFolders = new Set<string>([dirname(command)]);
  // A script run directly names its interpreter in its first line (`#!/usr/bin/env node`): that
  // interpreter is needed too, and the script is code like a script given as an argument. Other
  // files among the arguments (data) are granted only through `read`.
  const interpreter = await shebangInterpreter(command, hostPath);
  if (interpreter !== undefined) {
    code.add(interpreter);
    interpreterFolders.add(dirname(interpreter));
  }
  const packages = new Set<string>();
  // Node's first argument is its script whatever its name (a package's bin may have no extension).
  const nodeCommand = NODE_PROGRAM.test(basename(command));
  const scriptArgs = entry.args.filter(
    (arg, index) => isAbsolute(arg) && (SCRIPT_FILE.test(arg) || (nodeCommand && index === 0)),
  );
  const scripts = interpreter === undefined ? scriptArgs : [command, ...scriptArgs];
  for (const script of scripts) {
    const info = await stat(script).catch(() => undefined);
    if (info === undefined || !info.isFile()) continue;
    const root = await packageRoot(await realpath(script));
    if (root === undefined) {
      code.add(await realpath(script));
      continue;
    }
    for (const folder of await dependencyClosure(root)) {
      readOnly.add(folder);
      packages.add(folder);
    }
  }
  return {
    command,
    args: entry.args,
    paths: {
      code: [...code],
      readOnly: [...readOnly],
      readWrite: entry.write,
      network: false,
    },
    path: [...interpreterFolders, SYSTEM_PATH].join(':'),
    packages: [...packages],
    node: NODE_PROGRAM.test(basename(interpreter ?? command)),
  };
}

/** The interpreter a script's `#!` line names, by its real path; undefined for a binary. */
async function shebangInterpreter(file: string, hostPath: string): Promise<string | undefined> {
  let head = '';
  try {
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(256);
      const { bytesRead } = await handle.read(buffer, 0, 256, 0);
      head = buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!')) return undefined;
  const words = (head.slice(2).split('\n')[0] ?? '').trim().split(/\s+/);
  // `#!/usr/bin/env node` (or `env -S node --flag`): the program after env's own options.
  const program =
    basename(words[0] ?? '') === 'env' ? words.slice(1).find((word) => !word.startsWith('-')) : words[0];
  if (program === undefined) return undefined;
  const path = program.includes('/') ? program : findOnPath(program, hostPath);
  return path === undefined ? undefined : realpath(path).catch(() => undefined);
}

/** The folder of the nearest package.json above `file`. */
async function packageRoot(file: string): Promise<string | undefined> {
  let folder = dirname(file);
  for (;;) {
    if ((await stat(join(folder, 'package.json')).catch(() => undefined))?.isFile()) return folder;
    const parent = dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
}

/**
 * The package at `root` and every package its `dependencies`, `optionalDependencies` and
 * `peerDependencies` lead to, each found from its dependent's real folder up through every
 * `node_modules` above it, as Node looks for it. Each is given as Node meets it and by its real
 * path (a link in node_modules leads somewhere else).
 */
async function dependencyClosure(root: string): Promise<string[]> {
  const folders = new Set<string>([root]);
  const seen = new Set<string>([root]);
  // Level by level, each level's lookups at once: a real server's closure is a hundred packages.
  let level = [root];
  while (level.length > 0 && seen.size < MAX_PACKAGES) {
    const found = await Promise.all(
      level.map(async (folder) => {
        const names = await dependencyNames(folder);
        return Promise.all(names.map((name) => findPackage(folder, name)));
      }),
    );
    const next: string[] = [];
    for (const dependency of found.flat()) {
      if (dependency === undefined) continue;
      folders.add(dependency.path);
      folders.add(dependency.real);
      if (seen.has(dependency.real)) continue;
      seen.add(dependency.real);
      next.push(dependency.real);
    }
    level = next;
  }
  return [...folders];
}

async function dependencyNames(folder: string): Promise<string[]> {
  const file = join(folder, 'package.json');
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || info.size > MAX_MANIFEST_BYTES) return [];
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return [];
  }
  if (typeof manifest !== 'object' || manifest === null) return [];
  const names = new Set<string>();
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    const listed = (manifest as Record<string, unknown>)[field];
    if (typeof listed !== 'object' || listed === null) continue;
    for (const name of Object.keys(listed)) if (isPackageName(name)) names.add(name);
  }
  return [...names];
}
