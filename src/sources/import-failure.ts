/**
 * Why a module's import of a package failed, in terms of the snapshot it runs from: a package runs
 * from a copy of its folder with only the closure of its `dependencies` and `optionalDependencies`
 * in node_modules (see snapshot/dependency-closure.ts). A library the package lists only in
 * `devDependencies`, or lists nowhere, is installed beside it and yet "cannot be found": say so, and
 * name the package and the field to move it to.
 *
 * A TypeScript module fails the same way on a Node that does not strip types ("Unknown file
 * extension"): say which Node versions load it, and what to do on this one.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { PACKAGE_NAME } from '../snapshot/dependency-closure.js';
import type { Snapshot } from '../snapshot/layout.js';

/** A manifest larger than this is not read for the explanation (a package.json is a few KB). */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** What Node says when an import names a package it can't find (ES modules, then CommonJS). */
const CANNOT_FIND = /Cannot find (?:package|module) '((?:@[^'/\s]+\/)?[^'/\s]+)[^']*'/;
/** What Node says when it is asked to load a TypeScript file and does not strip types. */
const TYPESCRIPT_EXTENSION = /Unknown file extension "\.[mc]?ts"/;
/** The fields whose packages (and theirs) the snapshot copies. */
const COPIED_FIELDS = ['dependencies', 'optionalDependencies'] as const;

/**
 * `reason` (an import failure's text) with what the snapshot holds added: for a package, whether
 * the package it could not find is a devDependency, or installed but not declared.
 */
export async function explainImport(snapshot: Snapshot, code: string, reason: string): Promise<string> {
  if (code !== 'IMPORT_FAILED') return reason;
  if (TYPESCRIPT_EXTENSION.test(reason)) return `${reason} (${typeScriptAdvice()})`;
  if (!/Cannot find (module|package)/.test(reason)) return reason;
  if (snapshot.kind === 'module')
    return `${reason} (a module loaded on its own runs from a copy of that one file: load the package folder it belongs to, so what it imports comes along)`;
  const generic = `${reason} (a package runs from a copy of its folder: what it imports must be inside it, its dependencies in its own node_modules)`;
  const imported = CANNOT_FIND.exec(reason)?.[1];
  if (imported === undefined || !PACKAGE_NAME.test(imported) || imported.includes(':')) return generic;
  const manifest = await readManifest(join(snapshot.root, 'package.json'));
  if (manifest === undefined) return generic;
  const packageName = typeof manifest['name'] === 'string' ? manifest['name'] : basename(snapshot.root);
  if (COPIED_FIELDS.some((field) => listsName(manifest, field, imported))) return generic;
  const copied = `only the packages in "dependencies" and "optionalDependencies", and what they depend on, are copied into the snapshot a package runs from`;
  if (listsName(manifest, 'devDependencies', imported))
    return `${reason} (${imported} is in the devDependencies of ${packageName}: ${copied}; move ${imported} to "dependencies" in its package.json)`;
  if (await isInstalled(snapshot.root, imported))
    return `${reason} (${imported} is in ${packageName}'s node_modules but not in its "dependencies": ${copied}; add ${imported} to "dependencies" in its package.json)`;
  return generic;
}

/** The package.json at `path` as an object, or undefined when it is missing, huge or not JSON. */
async function readManifest(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function listsName(manifest: Record<string, unknown>, field: string, name: string): boolean {
  const listed = Object.hasOwn(manifest, field) ? manifest[field] : undefined;
  return (
    typeof listed === 'object' && listed !== null && !Array.isArray(listed) && Object.hasOwn(listed, name)
  );
}

/** Whether the package folder's own node_modules holds `name` (as npm installs it there). */
async function isInstalled(root: string, name: string): Promise<boolean> {
  const info = await stat(join(root, 'node_modules', name, 'package.json')).catch(() => undefined);
  return info?.isFile() === true;
}

/**
 * Node loads `.ts`, `.mts` and `.cts` modules by stripping their types, without a flag, from 22.18
 * on the 22 line and from 23.6 (Node's "Modules: TypeScript" page); before that it refuses them.
 */
function typeScriptAdvice(): string {
  return `Node ${process.versions.node} does not load TypeScript; Node 22.18 or later (23.6 or later on the 23 line) strips the types of .ts modules without a flag: run toolhost on such a Node, or compile the module to JavaScript (tsc) and load the .js file`;
}
