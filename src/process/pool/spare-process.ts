/**
 * One spare package process as it is made (spares.ts keeps them): its folders under the host's tmp
 * root, the sandbox paths that hide the rest of that root behind its overlay, and its process,
 * started with toolhost's code only. Kept apart from the set of spares so that what one spare is
 * reads in one place, and the set's rules (the budget, taking, closing) in another.
 */
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ReplyLimits } from '../../boundary/parse-call-reply.js';
import type { PoolLimits } from '../../calls/pool-workers.js';
import type { ChildNote } from '../channel/child-notes.js';
import type { ChildEnvironment } from '../sandbox/process-tier.js';
import type { SandboxPaths } from '../sandbox/sandbox.js';
import type { ChildEnd } from './child-end.js';
import { DomainChild } from './domain-child.js';
import { callProcessFlags } from './process-flags.js';

/** What a spare's owner hears from it: the spares', then a pool's once one has taken it. */
export interface SpareHandlers {
  onReady(): void;
  onNote(note: ChildNote): void;
  onEnd(end: ChildEnd): void;
}

export interface Spare {
  child: DomainChild;
  key: string;
  folder: string;
  overlay: string;
  tmpDir: string;
  /** Which handlers hear it: the spares', then a pool's. */
  handlers: SpareHandlers;
  idle?: NodeJS.Timeout;
  /** Its process has ended. */
  gone: boolean;
}

/** What every spare of a host is started with. */
export interface SpareProcessSettings {
  tmpRoot: string;
  memoryMb: number;
  environment: () => Promise<ChildEnvironment>;
}

/** What one spare is made for: a pool's limits (and their key), and the name of its folder. */
export interface SpareStart {
  limits: PoolLimits;
  key: string;
  replyLimits: ReplyLimits;
  /** Unique among the host's spares: the name of its folder. */
  name: string;
  /** Its process has ended, before a pool took it: the spares forget it. */
  onGone: (spare: Spare) => void;
}

/** Limits as a spare must match them: all but the tmp folder, which is the spare's own. */
export function limitsKey(limits: PoolLimits): string {
  return JSON.stringify({ ...limits, call: { ...limits.call, tmpDir: '' } });
}

/**
 * A spare's folders: its own under the tmp root, the overlay bound read-only over that root, and
 * inside the overlay only the mount point of its tmp folder. Throws when they can't be made.
 */
function spareFolders(
  tmpRoot: string,
  name: string,
): { folder: string; overlay: string; paths: SandboxPaths } {
  const folder = join(tmpRoot, 'spares', name);
  const overlay = join(folder, 'overlay');
  const tmpDir = join(folder, 'tmp');
  mkdirSync(join(overlay, relative(tmpRoot, tmpDir)), { recursive: true });
  const paths = { readOnly: [], tmpDir, network: false, overlay: { folder: overlay, at: tmpRoot } };
  return { folder, overlay, paths };
}

/** Makes one spare's folders and starts its process (readied for tools: all but a package's code). */
export function startSpare(settings: SpareProcessSettings, start: SpareStart): Spare {
  const { limits, key, replyLimits } = start;
  const { folder, overlay, paths } = spareFolders(settings.tmpRoot, start.name);
  const { tmpDir } = paths;
  const spare: Spare = {
    child: undefined as unknown as DomainChild,
    key,
    folder,
    overlay,
    tmpDir,
    handlers: {
      onReady: () => {},
      // Before a package is in it, nothing runs there but toolhost's code: a fault is the spare's.
      onNote: () => {},
      onEnd: () => start.onGone(spare),
    },
    gone: false,
  };
  spare.child = new DomainChild({
    init: { type: 'init', mode: 'calls', limits: { ...limits, call: { ...limits.call, tmpDir } } },
    nodeFlags: callProcessFlags(limits, limits.execArgv),
    paths,
    memoryMb: settings.memoryMb,
    heapMb: limits.heapMb,
    replyLimits,
    environment: settings.environment,
    onReady: () => spare.handlers.onReady(),
    onNote: (note) => spare.handlers.onNote(note),
    onEnd: (end: ChildEnd) => {
      spare.gone = true;
      spare.handlers.onEnd(end);
      void rm(folder, { recursive: true, force: true }).catch(() => {});
    },
  });
  return spare;
}
