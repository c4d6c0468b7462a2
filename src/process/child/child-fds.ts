/**
 * A package's process starts with the descriptors it was given (its stdio and the channel to the
 * host) and, on most systems, every descriptor its parents left open without close-on-exec: a
 * shell's, an editor's, a CI runner's pipes, which the host inherited the same way. A tool could
 * write to those. Node opens everything of its own with close-on-exec, so a descriptor without that
 * flag when this process starts was inherited: it is closed before any tool code runs. The process
 * lists its own descriptors: in a sandbox its /proc is its own, and under Node's permission model
 * it is granted {@link DESCRIPTOR_INFO} to read (not `/proc/self/fd`, whose entries open the files).
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** Where a process reads its own descriptors: one file per descriptor, its flags among its lines. */
export const DESCRIPTOR_INFO = '/proc/self/fdinfo';

/** `O_CLOEXEC` as `/proc/<pid>/fdinfo` shows it in `flags` (octal). */
const O_CLOEXEC = 0o2000000;

/**
 * This process's open descriptors without close-on-exec, but `skip`; `undefined` where it can't
 * tell them all: it can't list them (no /proc, or Node's permission model refuses it), or one it
 * listed can't be read for any reason but being gone.
 */
function inheritable(skip: (fd: number) => boolean): number[] | undefined {
  let names: string[];
  try {
    names = readdirSync(DESCRIPTOR_INFO);
  } catch {
    return undefined;
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isSafeInteger(fd) || skip(fd)) continue;
    let info: string;
    try {
      info = readFileSync(`${DESCRIPTOR_INFO}/${fd}`, 'utf8');
    } catch (error) {
      // Gone (the directory listing's own descriptor, say); any other failure leaves it unknown.
      if ((error as { code?: unknown }).code === 'ENOENT') continue;
      return undefined;
    }
    const flags = Number.parseInt(/^flags:\s*([0-7]+)$/m.exec(info)?.[1] ?? '', 8);
    if (Number.isNaN(flags)) return undefined;
    if ((flags & O_CLOEXEC) === 0) found.push(fd);
  }
  return found;
}

function closeAll(fds: number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // Closed meanwhile, or not open here.
    }
  }
}

/**
 * Closes every inherited descriptor but `keep`; `undefined` where this process can't list its
 * descriptors.
 */
export function closeInheritedDescriptors(keep: ReadonlySet<number>): number[] | undefined {
  const found = inheritable((fd) => keep.has(fd));
  if (found !== undefined) closeAll(found);
  return found;
}
