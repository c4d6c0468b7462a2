/**
 * A package's process starts with the descriptors it was given (its stdio and the channel to the
 * host) and, on most systems, every descriptor its parents left open without close-on-exec: a
 * shell's, an editor's, a CI runner's pipes, which the host inherited the same way. A tool could
 * write to those. Node opens everything of its own with close-on-exec, so a descriptor without that
 * flag when this process starts was inherited: it is closed before any tool code runs.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** `O_CLOEXEC` as `/proc/<pid>/fdinfo` shows it in `flags` (octal). */
const O_CLOEXEC = 0o2000000;

/**
 * This process's open descriptors without close-on-exec, but `skip`; `undefined` where it can't
 * list them (not Linux, or Node's permission model refuses /proc).
 */
function inheritable(skip: (fd: number) => boolean): number[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return undefined;
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isSafeInteger(fd) || skip(fd)) continue;
    try {
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
      const flags = Number.parseInt(/^flags:\s*([0-7]+)$/m.exec(info)?.[1] ?? '', 8);
      if (!Number.isNaN(flags) && (flags & O_CLOEXEC) === 0) found.push(fd);
    } catch {
      // Gone (the directory listing's own descriptor, say).
    }
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
 * descriptors (then see {@link closeDescriptors}).
 */
export function closeInheritedDescriptors(keep: ReadonlySet<number>): number[] | undefined {
  const found = inheritable((fd) => keep.has(fd));
  if (found !== undefined) closeAll(found);
  return found;
}

/**
 * Closes the descriptors `list` names (`5,7`), but `keep`: those the host passed on to this process
 * (its {@link inheritableDescriptors} when it started it), for a process that can't list its own.
 */
export function closeDescriptors(list: string, keep: ReadonlySet<number>): void {
  const fds = list
    .split(',')
    .filter((name) => name !== '')
    .map(Number)
    .filter((fd) => Number.isSafeInteger(fd) && fd >= 0 && !keep.has(fd));
  closeAll(fds);
}

/**
 * The descriptors this process (the host) holds without close-on-exec above `above`: what a process
 * it starts inherits beside the stdio it is given. Empty where there is no /proc to list them.
 */
export function inheritableDescriptors(above: number): number[] {
  return inheritable((fd) => fd <= above) ?? [];
}
