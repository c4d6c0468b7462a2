/**
 * Writes small tool packages into temp folders for tests that add, change and remove packages.
 */
import { cp, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function tempDir(prefix = 'toolhost-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** A tool module whose `run` returns `answer` (a JS expression). */
export function toolSource(name: string, answer: string, extra = ''): string {
  return `export const name = ${JSON.stringify(name)};
export const description = 'test tool ${name}';
export const parameterSchema = { type: 'object' };
${extra}
export function run(args, ctx) { return ${answer}; }
`;
}

/** Writes a package folder with one module per entry of `tools` (file name -> source). */
export async function writePackage(root: string, tools: Record<string, string>): Promise<string> {
  await mkdir(join(root, 'tools'), { recursive: true });
  for (const [file, source] of Object.entries(tools)) await writeFile(join(root, 'tools', file), source);
  const manifest = {
    name: root.split('/').pop(),
    type: 'module',
    toolhost: { tools: Object.keys(tools).map((file) => `./tools/${file}`) },
  };
  await writeFile(join(root, 'package.json'), JSON.stringify(manifest, null, 2));
  return root;
}

export async function removeDir(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

interface StatusSource {
  status(): Array<{ path: string; state: string; name?: string; version?: string; code?: string }>;
  on(event: 'module', listener: () => void): unknown;
  off(event: 'module', listener: () => void): unknown;
}

/** Resolves once `predicate` holds for the host's status, checking after every module event. */
export function whenStatus<T extends StatusSource>(
  host: T,
  predicate: (status: ReturnType<T['status']>) => boolean,
): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (predicate(host.status() as ReturnType<T['status']>)) {
        host.off('module', check);
        resolve();
      }
    };
    host.on('module', check);
    check();
  });
}

/**
 * A copy of the package at `source`, in `root`, holding `notes.txt`: a symbolic link to a secrets
 * file outside it. What a package that Node's permission model can't confine looks like.
 */
export async function copyWithEscapingLink(
  source: string,
  root: string,
): Promise<{ copy: string; link: string; target: string }> {
  const copy = join(root, 'linked-copy');
  const target = join(root, 'secrets.txt');
  await cp(source, copy, { recursive: true });
  await writeFile(target, 'sk-fake-secret-behind-a-link');
  await symlink(target, join(copy, 'notes.txt'));
  return { copy, link: join(await realpath(copy), 'notes.txt'), target: await realpath(target) };
}

/** What a package holding a link to a folder above itself is refused with (`tier` as the reason names it). */
export const CLIMBING_REASON = (tier: string, link: string, target: string) =>
  `${tier} can't confine this package: ${link} is a symbolic link to ${target}, above it, and not a file its snapshot holds: a path that goes down through it and back up with '..' leads outside the package (Node's permission model reads the '..' before the system follows the link)`;

/**
 * A copy of the package at `source`, in `root`, holding `tools/sub/up`: a symbolic link to `tools`,
 * inside the package. Through it, `tools/sub/up/sub/up/../../../../../../etc/hostname` is inside the
 * package as text (what Node's permission model checks) and far above it on disk (what the system
 * reads).
 */
export async function copyWithClimbingLink(
  source: string,
  root: string,
): Promise<{ copy: string; link: string; target: string }> {
  const copy = join(root, 'climbing-copy');
  await cp(source, copy, { recursive: true });
  await mkdir(join(copy, 'tools', 'sub'));
  await symlink('..', join(copy, 'tools', 'sub', 'up'));
  const real = await realpath(copy);
  return { copy, link: join(real, 'tools', 'sub', 'up'), target: join(real, 'tools') };
}
