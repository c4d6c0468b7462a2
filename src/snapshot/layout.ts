/**
 * Where things are in a snapshot: every folder name a host makes for one (its temp root, the
 * snapshots folder, a trust domain's trees and versions, a folder still being built), the URL a
 * worker imports and the package's paths in messages. Whoever makes or reads those folders takes
 * their names from here.
 *
 *   <tempRoot>/toolhost-<pid>-<8 hex>/                      a host's temp root
 *     snapshots/store/                                    the host's records of the file store
 *     snapshots/<slug of the package root>/               a trust domain
 *       nm-<fingerprint>-<n>/                             one per state of what the package can import
 *                                                         (its node_modules may lead to a kept tree:
 *                                                         kept-trees.ts)
 *         v-<version>-<n>/                                one per version of its own files
 *   <any of these>.tmp-<hex>                              one still being built (renamed when whole)
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A package with more own files than this has no per-file digests (see {@link Snapshot.files}). */
export const MAX_FILE_DIGESTS = 2000;

/** One version of a package (or of a module loaded on its own), frozen. */
export interface Snapshot {
  /** The version: a hash of the package's own files and of its node_modules' identity. */
  readonly id: string;
  /**
   * The whole hash `id` is the start of (`sha256:<hex>`): what a lock pins as the version's content,
   * where 64 bits would leave a collision within reach of an author who makes both versions.
   */
  readonly digest: string;
  /**
   * What `digest` is made of, by path: `sha256:` of each of the package's own files (of a link's
   * target, for a link), and of its node_modules' identity as `node_modules`. A lock keeps them to
   * name the files that changed; none past {@link MAX_FILE_DIGESTS} files.
   */
  readonly files: Readonly<Record<string, string>> | undefined;
  /** The package folder or the module file it is a copy of. */
  readonly root: string;
  readonly kind: 'package' | 'module';
  /** The version folder: modules are imported from here. */
  readonly folder: string;
  /** What a strict worker may read: this version and the dependency tree beside it. */
  readonly grant: string;
  /**
   * The dependency tree kept in the store that `grant`'s `node_modules` leads to, for a large
   * closure (see kept-trees.ts): what a strict worker or a sandbox may read besides `grant`.
   */
  readonly keptTree?: string;
  /**
   * The first symbolic link the copy keeps to the original, outside the package (an `npm link`ed
   * dependency, an own file linked from elsewhere): what it leads to is in neither the copy nor
   * `digest`, so a lock can't pin it.
   */
  readonly linkOut?: { readonly link: string; readonly target: string };
}

/** The file URL a worker imports for `modulePath` (a real path inside the snapshot's root). */
export function snapshotUrl(snapshot: Snapshot, modulePath: string): string {
  const inside = snapshot.kind === 'module' ? basename(snapshot.root) : relative(snapshot.root, modulePath);
  return pathToFileURL(join(snapshot.folder, inside)).href;
}

/** `text` (an error message, a stack) with the snapshot's paths put back as the package's own. */
export function toOriginalPaths(snapshot: Snapshot, text: string): string {
  const pairs: Array<[string, string]> =
    snapshot.kind === 'module'
      ? [
          [join(snapshot.folder, basename(snapshot.root)), snapshot.root],
          [snapshot.folder, dirname(snapshot.root)],
        ]
      : [
          [snapshot.folder, snapshot.root],
          [join(snapshot.grant, 'node_modules'), join(snapshot.root, 'node_modules')],
          ...(snapshot.keptTree === undefined
            ? []
            : [
                [join(snapshot.keptTree, 'node_modules'), join(snapshot.root, 'node_modules')] as [
                  string,
                  string,
                ],
              ]),
        ];
  let result = text;
  for (const [from, to] of pairs) {
    result = result.replaceAll(pathToFileURL(from).href, pathToFileURL(to).href).replaceAll(from, to);
  }
  return result;
}

/** The module-format part (`type`) of the nearest package.json above `folder`, if there is one. */
export async function nearestPackageScope(folder: string): Promise<{ type?: string } | undefined> {
  for (let current = folder; ; current = dirname(current)) {
    const text = await readFile(join(current, 'package.json'), 'utf8').catch(() => undefined);
    if (text !== undefined) {
      try {
        const type = (JSON.parse(text) as { type?: unknown }).type;
        return typeof type === 'string' ? { type } : {};
      } catch {
        return {};
      }
    }
    if (dirname(current) === current) return undefined;
  }
}

export function slug(root: string): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 12);
}

/** `toolhost-<pid>-<8 hex>`: a host's temp root, under its `tmpDir` option. */
const TEMP_ROOT_NAME = /^toolhost-(\d+)-[0-9a-f]{8}$/;
const SNAPSHOTS = 'snapshots';
const TREE_PREFIX = 'nm-';
const VERSION_PREFIX = 'v-';
const BUILDING = '.tmp-';

/** A new host temp root's name, for this process. */
export function tempRootName(): string {
  return `toolhost-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** The pid of the process whose host made the temp root `name`; undefined for any other name. */
export function tempRootPid(name: string): number | undefined {
  const pid = Number(TEMP_ROOT_NAME.exec(name)?.[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Where a host keeps its snapshots, in its temp root. */
export function snapshotsFolder(tempRoot: string): string {
  return join(tempRoot, SNAPSHOTS);
}

/** The host's own records of the file store, beside its trust domains. */
export function hostStoreFolder(snapshots: string): string {
  return join(snapshots, 'store');
}

/** A dependency tree's folder: in the package's trust domain, by its fingerprint and a counter. */
export function treeFolder(snapshots: string, root: string, fingerprint: string, counter: number): string {
  return join(snapshots, slug(root), `${TREE_PREFIX}${fingerprint.slice(0, 16)}-${counter}`);
}

/** A version's folder, inside its dependency tree's. */
export function versionFolder(tree: string, version: string, counter: number): string {
  return join(tree, `${VERSION_PREFIX}${version}-${counter}`);
}

/** Where `folder` is built before it is renamed into place, whole. */
export function buildingFolder(folder: string): string {
  return `${folder}${BUILDING}${randomBytes(4).toString('hex')}`;
}

/**
 * The version folders of `root`'s snapshots at `version` that hosts made under `tmpDir` (their
 * `tempRoot` option): where a tool writing beside its own module file writes. For tools that watch
 * what a selftest writes (the `toolhost selftest` command).
 */
export async function snapshotFoldersOf(tmpDir: string, root: string, version: string): Promise<string[]> {
  const found: string[] = [];
  const names = (folder: string) => readdir(folder).catch(() => [] as string[]);
  for (const host of await names(tmpDir)) {
    if (tempRootPid(host) === undefined) continue;
    const domain = join(snapshotsFolder(join(tmpDir, host)), slug(root));
    for (const tree of await names(domain)) {
      if (!tree.startsWith(TREE_PREFIX) || tree.includes(BUILDING)) continue;
      for (const entry of await names(join(domain, tree))) {
        if (entry.startsWith(`${VERSION_PREFIX}${version}-`) && !entry.includes(BUILDING))
          found.push(join(domain, tree, entry));
      }
    }
  }
  return found;
}
