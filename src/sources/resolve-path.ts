/**
 * What a path given to `host.load` names: a tool package (a folder whose package.json lists its
 * modules under `toolhost.tools`), its `package.json`, or a single module file. Mistakes here are
 * the caller's, so they throw a {@link ToolHostError} with one clear sentence.
 */
import { readFile, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolHostError } from '../boundary/errors.js';
import type { NetworkAsk } from '../process/network/grant.js';
import { parseNetRules } from '../process/network/rules.js';
import { parseSecretBindings, type SecretBinding } from '../process/network/secrets/bindings.js';

/** One module a source lists: where it is, or why it can't be used. */
export type ListedModule =
  | { ok: true; path: string }
  | { ok: false; path: string; code: 'MODULE_NOT_FOUND' | 'MODULE_OUTSIDE_PACKAGE'; reason: string };

/**
 * What a package asks for in its manifest (`"toolhost": { "permissions": { "net": true } }`). Asking
 * is not having: the host grants each only when its own options allow it.
 */
export interface PackagePermissions {
  /**
   * Network access: `true` for all of it, or the hosts it needs (`["api.weather.gov",
   * "*.example.com:443"]`: a name or address, an optional port, a leading `*.`).
   */
  net: NetworkAsk;
  /**
   * Secrets it asks for, each with the hosts it is for (`"secrets": { "GITHUB_TOKEN":
   * ["api.github.com"] }`); absent when it asks for none. Its tools hold only a placeholder.
   */
  secrets?: readonly SecretBinding[];
}

/**
 * The most different paths one package's `toolhost.tools` may list (spellings of one path count
 * once). Each module is read in a throwaway worker (or process) of its own, so a manifest's length
 * is load time: a longer list is refused as a whole (`NOT_A_PACKAGE`) before any entry is resolved.
 */
export const MAX_LISTED_MODULES = 256;

/** What a package asks for when its manifest says nothing, and what a single module file gets. */
export const NO_PERMISSIONS: PackagePermissions = Object.freeze({ net: false });

export interface ResolvedSource {
  /** The real path of the package folder or the module file. */
  root: string;
  kind: 'package' | 'module';
  /** The package's `name`, when it has one. */
  packageName: string | undefined;
  /** What the package's manifest asks for; a single module file asks for nothing. */
  permissions: PackagePermissions;
  modules: ListedModule[];
}

export async function resolveSource(path: string): Promise<ResolvedSource> {
  const absolute = resolve(path);
  const info = await stat(absolute).catch(() => undefined);
  if (info === undefined) throw new ToolHostError('PATH_NOT_FOUND', await notFound(path, absolute));
  const real = await realpath(absolute);
  // A package's manifest stands for its package: sources that list package.json files are common.
  if (info.isFile() && basename(real) === 'package.json') return resolveSource(dirname(absolute));
  if (info.isFile()) {
    const modules: ListedModule[] = [{ ok: true, path: real }];
    return { root: real, kind: 'module', packageName: undefined, permissions: NO_PERMISSIONS, modules };
  }
  if (!info.isDirectory()) throw new ToolHostError('NOT_A_PACKAGE', `Not a file or a folder: ${path}`);
  return { root: real, kind: 'package', ...(await listPackage(real, real, path)) };
}

/**
 * A package's name and listed modules as the folder `folder` holds them (the package itself, or its
 * snapshot), with module paths given under `root` (the package's real path) either way.
 */
export async function listPackage(
  folder: string,
  root: string,
  shown: string,
): Promise<{ packageName: string | undefined; permissions: PackagePermissions; modules: ListedModule[] }> {
  const manifest = await readManifest(folder, shown);
  // What leads out of the package can't be in its snapshot: it is judged (and named) where the
  // package itself is.
  const resolved = await Promise.all(
    manifest.tools.map((entry) =>
      folder !== root && !isInside(folder, resolve(folder, entry))
        ? resolveListed(root, entry)
        : resolveListed(folder, entry),
    ),
  );
  // Entries that lead to one file through links are one module too, listed where it first appears.
  const modules = firstOfEach(resolved, (module) => module.path);
  const underRoot = (path: string) =>
    folder === root || !isInside(folder, path) ? path : join(root, relative(folder, path));
  return {
    packageName: manifest.name,
    permissions: manifest.permissions,
    modules: modules.map((module) => ({ ...module, path: underRoot(module.path) })),
  };
}

/** Why a path can't be found, in words: a dangling symbolic link says where it points. */
async function notFound(shown: string, absolute: string): Promise<string> {
  const target = await readlink(absolute).catch(() => undefined);
  if (target === undefined) return `No such file or directory: ${shown}`;
  return `${shown} is a symbolic link to ${resolve(dirname(absolute), target)}, which does not exist`;
}

async function readManifest(
  root: string,
  shown: string,
): Promise<{ name: string | undefined; tools: string[]; permissions: PackagePermissions }> {
  const file = join(root, 'package.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new ToolHostError('NOT_A_PACKAGE', `Not a tool package: ${shown} has no package.json`);
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `Not a tool package: ${file} is not valid JSON (${(error as Error).message})`,
    );
  }
  const section = isRecord(manifest) ? manifest['toolhost'] : undefined;
  const tools = isRecord(section) ? section['tools'] : undefined;
  if (!isRecord(section) || !Array.isArray(tools) || !tools.every((entry) => typeof entry === 'string')) {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `Not a tool package: ${file} has no "toolhost": { "tools": [...] } list of module paths`,
    );
  }
  // Spellings of one path (`./a.js`, `a.js`, `x/../a.js`) are one entry: each entry kept is a read.
  const distinct = firstOfEach(tools, (entry) => resolve(root, entry));
  if (distinct.length > MAX_LISTED_MODULES) {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `Not a tool package: ${file} lists ${distinct.length} different paths under "toolhost": { "tools" }, more than the ${MAX_LISTED_MODULES} one package may list`,
    );
  }
  const name = isRecord(manifest) && typeof manifest['name'] === 'string' ? manifest['name'] : undefined;
  return { name, tools: distinct, permissions: readPermissions(section, file) };
}

/**
 * `toolhost.permissions`: absent means nothing is asked. A malformed entry is the package author's
 * mistake and is said so, rather than read as asking for nothing (the tools would then fail in ways
 * that don't name the manifest). Keys this version does not know are ignored, so a package written
 * for a later toolhost still loads.
 */
function readPermissions(section: Record<string, unknown>, file: string): PackagePermissions {
  const permissions = section['permissions'];
  if (permissions === undefined) return NO_PERMISSIONS;
  if (!isRecord(permissions)) {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `Not a tool package: ${file} has "toolhost": { "permissions": ... } that is not an object`,
    );
  }
  const net = readNet(permissions['net'], file);
  const secrets = parseSecretBindings(permissions['secrets'], net.net);
  if (!secrets.ok) {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `Not a tool package: ${file} has "toolhost": { "permissions": { "secrets": ... } } where ${secrets.reason}`,
    );
  }
  return secrets.bindings.length === 0 ? net : Object.freeze({ ...net, secrets: secrets.bindings });
}

/** `toolhost.permissions.net`, checked. */
function readNet(net: unknown, file: string): PackagePermissions {
  if (Array.isArray(net)) {
    const rules = parseNetRules(net);
    if (!rules.ok) {
      throw new ToolHostError(
        'NOT_A_PACKAGE',
        `Not a tool package: ${file} has "toolhost": { "permissions": { "net": [...] } } where ${rules.reason}`,
      );
    }
    return net.length === 0 ? NO_PERMISSIONS : Object.freeze({ net: Object.freeze([...(net as string[])]) });
  }
  if (net !== undefined && typeof net !== 'boolean') {
    throw new ToolHostError(
      'NOT_A_PACKAGE',
      `Not a tool package: ${file} has "toolhost": { "permissions": { "net": ... } } that is not true, false or a list of hosts`,
    );
  }
  return net === true ? { net: true } : NO_PERMISSIONS;
}

async function resolveListed(root: string, entry: string): Promise<ListedModule> {
  const candidate = resolve(root, entry);
  let real: string;
  try {
    real = await realpath(candidate);
    if (!(await stat(real)).isFile()) throw new Error('not a file');
  } catch {
    return {
      ok: false,
      path: candidate,
      code: 'MODULE_NOT_FOUND',
      reason: `the listed module ${entry} does not exist`,
    };
  }
  // A listed path (or a symlink) that leads out of the package would make another folder's code
  // part of this package's trust domain.
  if (!isInside(root, real)) {
    return {
      ok: false,
      path: candidate,
      code: 'MODULE_OUTSIDE_PACKAGE',
      reason: `the listed module ${entry} resolves to ${real}, outside the package`,
    };
  }
  return { ok: true, path: real };
}

export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/** The items whose key no earlier item has, in order. */
function firstOfEach<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = keyOf(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
