/**
 * Whether a process id names a running process. Signal 0 checks that a process exists without
 * touching it; `EPERM` means it exists but belongs to another user: alive. (A pid reused by an
 * unrelated process also reads as alive, which errs on the safe side for the sweeps that ask: what
 * that process owned waits for a later sweep.)
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
