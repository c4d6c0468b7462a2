/**
 * A package's process starts with the descriptors it was given (its null stdio and the channel to
 * the host) and, on most systems, every descriptor its parents left open without close-on-exec: a
 * shell's, an editor's, a CI runner's pipes, which the host inherited the same way. A tool could
 * write to those. Node opens everything of its own with close-on-exec, so a descriptor without that
 * flag when this process starts was inherited: it is closed before any tool code runs.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** `O_CLOEXEC` as `/proc/<pid>/fdinfo` shows it in `flags` (octal). */
const O_CLOEXEC = 0o2000000;

/** Closes every inherited descriptor but `keep` (Linux; elsewhere there is no /proc to list them). */
export function closeInheritedDescriptors(keep: ReadonlySet<number>): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isSafeInteger(fd) || keep.has(fd)) continue;
    let flags: number;
    try {
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
      flags = Number.parseInt(/^flags:\s*([0-7]+)$/m.exec(info)?.[1] ?? '', 8);
    } catch {
      // Gone (the directory listing's own descriptor, say).
      continue;
    }
    if (Number.isNaN(flags) || (flags & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}
