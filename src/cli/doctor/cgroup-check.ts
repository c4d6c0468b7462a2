/**
 * The process tier's memory limit: a memory cgroup per package process (cgroup v2 with the memory
 * controller delegated to the host's cgroup, or v1's memory hierarchy), else a watchdog of
 * resident memory. The probe is the tier's own (memory-cgroup.ts).
 */
import { cgroupSupport } from '../../process/sandbox/memory-cgroup.js';
import { BUSY_INTERVAL_MS } from '../../process/sandbox/rss-watchdog.js';
import type { DoctorCheck } from './check.js';

export async function cgroupCheck(): Promise<DoctorCheck> {
  const support = await cgroupSupport();
  if (support.available) {
    const how =
      support.version === 2
        ? `cgroup v2, the memory controller delegated under ${support.parent}`
        : `cgroup v1's memory hierarchy, under ${support.parent}`;
    return {
      id: 'memory-cgroup',
      status: 'ok',
      found: `${how}: the kernel enforces processMemoryMb on each package process`,
      tiers: ['process'],
    };
  }
  if (process.platform !== 'linux') {
    return {
      id: 'memory-cgroup',
      status: 'not-applicable',
      found: `${support.reason}: processMemoryMb is not enforced on ${process.platform}`,
      tiers: ['process'],
    };
  }
  return {
    id: 'memory-cgroup',
    status: 'note',
    found: `${support.reason}: processMemoryMb is watched (resident memory, every ${BUSY_INTERVAL_MS} ms), not enforced by the kernel`,
    fix: 'run toolhost in a cgroup that delegates the memory controller: systemd-run --user --scope -p Delegate=yes toolhost …, or Delegate=yes in the [Service] section of a systemd unit that runs it; in a container, give it a cgroup namespace of its own (docker run --cgroupns=private) with a writable /sys/fs/cgroup',
    tiers: ['process'],
  };
}
