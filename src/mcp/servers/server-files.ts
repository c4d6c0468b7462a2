/**
 * What a lock pins of a running server ({@link ServerRuns}): its command, arguments, the digest of
 * its `env` values, its grants, and the digest of the files its sandbox lets it read to run (its
 * plan's program, interpreter and package folders; not its `read` grants, which are data, unless
 * they hold its package). As a
 * snapshot names a package's version: files under a `node_modules` folder and programs outside any
 * package by identity (path, inode, size, modification and change times), the package's own files
 * by content, so a lock of a server in a checked-out folder holds on another checkout.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { digestOf } from '../../lock/canonical.js';
import { lockedBindings } from '../../lock/secret-bindings.js';
import { MAX_SERVER_FILES, type ServerRuns } from '../../lock/server-runs.js';
import { listTree, VCS_FOLDERS } from '../../snapshot/package-scan.js';
import type { ServerEntry } from './config.js';
import type { ServerPlan } from './server-sandbox.js';

/** What `entry`, run by `plan`, is as a lock pins it; rejects when its files can't all be counted. */
export async function serverRunsOf(entry: ServerEntry, plan: ServerPlan): Promise<ServerRuns> {
  const shown = (path: string) => shownPath(entry.folder, path);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(entry.env)) env[name] = digestOf(value);
  const secrets = lockedBindings(entry.secrets);
  return {
    name: entry.name,
    command: plan.command,
    args: plan.args.map(shown),
    env,
    files: await filesDigest(entry, plan),
    grants: {
      read: entry.read.map(shown),
      write: entry.write.map(shown),
      net: entry.net === false || entry.net === true ? entry.net : [...entry.net],
      allowEnv: [...entry.allowEnv],
      prefix: entry.prefix ?? null,
      timeoutMs: entry.timeoutMs ?? null,
      // Names and hosts only: a lock never holds a secret's value.
      ...(secrets === undefined ? {} : { secrets }),
    },
  };
}

/** A path inside the config's folder as `./…` (the same wherever the folder is), others as they are. */
function shownPath(folder: string, path: string): string {
  const inside = relative(folder, path);
  if (inside === '') return '.';
  if (inside === '..' || inside.startsWith(`..${sep}`) || inside.startsWith(sep)) return path;
  return path.startsWith(folder) ? `./${inside.split(sep).join('/')}` : path;
}

async function filesDigest(entry: ServerEntry, plan: ServerPlan): Promise<string> {
  const hash = createHash('sha256');
  // The package folders (a dependency is named as Node meets it and by its real path: one walk).
  const folders = [...new Set(plan.packages)].sort();
  const walked: string[] = [];
  let files = 0;
  for (const folder of folders) {
    if (walked.some((above) => folder.startsWith(`${above}/`))) continue;
    walked.push(folder);
    hash.update(`package ${shownPath(entry.folder, folder)}\n`);
    const tree = await listTree(folder, (_rel, name) => VCS_FOLDERS.has(name), AbortSignal.timeout(60_000));
    for (const item of tree) {
      // Past the bound nothing is vouched for: a file left uncounted could change unseen.
      if (++files > MAX_SERVER_FILES)
        throw new Error(`its package folders hold more than ${MAX_SERVER_FILES} files`);
      if (item.type === 'dir') hash.update(`d ${item.rel}\n`);
      else if (item.type === 'link') hash.update(`l ${item.rel} ${item.target}\n`);
      else if (isDependency(join(folder, item.rel)))
        hash.update(`f ${item.rel} ${identityText(item.identity)}\n`);
      else hash.update(`f ${item.rel} ${await contentHash(join(folder, item.rel))}\n`);
    }
  }
  // The program and its interpreter (and a script outside any package), where no folder holds them.
  for (const file of [...(plan.paths.code ?? [])].sort()) {
    if (walked.some((folder) => file.startsWith(`${folder}/`))) continue;
    const info = await lstat(file, { bigint: true }).catch(() => undefined);
    hash.update(
      `program ${file} ${info === undefined ? 'missing' : identityText({ ino: info.ino, size: info.size, mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs })}\n`,
    );
  }
  return `sha256:${hash.digest('hex')}`;
}

function isDependency(path: string): boolean {
  return path.split(sep).includes('node_modules');
}

function identityText(identity: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): string {
  return `${identity.ino} ${identity.size} ${identity.mtimeNs} ${identity.ctimeNs}`;
}

function contentHash(file: string): Promise<string> {
  return new Promise((resolve) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      // A file that can't be read is named as such: the server can't read it either.
      .on('error', (error) => resolve(`unreadable ${(error as NodeJS.ErrnoException).code ?? ''}`));
  });
}
