/**
 * Where this process's cgroups are: /proc/self/cgroup names each hierarchy's path, and
 * /proc/self/mountinfo where each hierarchy (or part of it, in a container) is mounted, its paths
 * octal-escaped (`\040` is a space). Shared by the memory cgroups and the pids cgroups.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Undoes mountinfo's octal escapes (`\040` is a space). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * The folder of cgroup `path` (as /proc/self/cgroup names it) where it is mounted: the first mount
 * in `mountinfo` (its text) that `matches` (its filesystem type and super options) and holds it.
 */
function mountedFolder(
  mountinfo: string,
  path: string,
  matches: (fsType: string | undefined, superOptions: string[]) => boolean,
): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    const fields = before?.split(' ') ?? [];
    const [fsType, , superOptions = ''] = after?.split(' ') ?? [];
    if (!matches(fsType, superOptions.split(','))) continue;
    const root = unescapeMountPath(fields[3] ?? '');
    const mountPoint = unescapeMountPath(fields[4] ?? '');
    // A mount of part of the hierarchy (a container's) shows paths relative to its root.
    if (path !== root && !path.startsWith(root === '/' ? '/' : `${root}/`)) continue;
    return join(mountPoint, path.slice(root === '/' ? 0 : root.length));
  }
  return undefined;
}

/**
 * This process's cgroup in the cgroup v1 hierarchy of `controller` (`memory`, `pids`), from the
 * texts of /proc/self/cgroup and /proc/self/mountinfo: null when no v1 hierarchy has that
 * controller, undefined when it has one that is not mounted where this process sees it.
 */
export function cgroupV1Folder(
  controller: string,
  cgroup: string,
  mountinfo: string,
): string | null | undefined {
  for (const line of cgroup.split('\n')) {
    const [, controllers = '', path = ''] = line.split(':');
    if (!controllers.split(',').includes(controller)) continue;
    return mountedFolder(
      mountinfo,
      path,
      (fsType, options) => fsType === 'cgroup' && options.includes(controller),
    );
  }
  return null;
}

/** This process's cgroup in the v1 hierarchy of `controller`, from /proc; undefined where there is none. */
export function hostCgroupV1Folder(controller: string): string | undefined {
  try {
    const proc = (file: string) => readFileSync(`/proc/self/${file}`, 'utf8');
    return cgroupV1Folder(controller, proc('cgroup'), proc('mountinfo')) ?? undefined;
  } catch {
    // No /proc: no cgroups.
    return undefined;
  }
}

/**
 * The folder of this process's memory cgroup, from /proc (v1 memory hierarchy first, then
 * cgroup2); throws where /proc can't be read.
 */
export function hostCgroupFolder(): { version: 1 | 2; folder: string } | undefined {
  const cgroup = readFileSync('/proc/self/cgroup', 'utf8');
  const mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  const v1 = cgroupV1Folder('memory', cgroup, mountinfo);
  if (v1 !== null) return v1 === undefined ? undefined : { version: 1, folder: v1 };
  const unified = cgroup.split('\n').find((line) => line.startsWith('0::'));
  if (unified === undefined) return undefined;
  const folder = mountedFolder(mountinfo, unified.slice(3), (fsType) => fsType === 'cgroup2');
  return folder === undefined ? undefined : { version: 2, folder };
}
