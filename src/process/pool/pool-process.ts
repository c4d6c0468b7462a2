/**
 * How a process-tier pool gets a process for its calls: a spare that may hold the package
 * (spares.ts), taken and given the package's snapshot, or else one of its own, started with the
 * package's paths bound and its flags. Either way the pool hears it through the same handlers.
 */

import type { PoolLimits } from '../../calls/pool-workers.js';
import type { ChildNote } from '../channel/child-notes.js';
import type { PackageEgress } from '../network/egress.js';
import type { ChildEnvironment } from '../sandbox/process-tier.js';
import type { SandboxPaths } from '../sandbox/sandbox.js';
import type { ChildEnd } from './child-end.js';
import { DomainChild } from './domain-child.js';
import type { ProcessCall } from './process-call.js';
import { callProcessFlags } from './process-flags.js';
import type { ProcessSpares } from './spares.js';

/** What a pool's processes are started with. */
export interface LiveOptions {
  /** The pool's bounds: processes (`maxThreads`), each one's heap, stack, flags, env, the calls' settings. */
  limits: PoolLimits;
  /** The same where there is no sandbox: its processes under the permission model (default: `limits`). */
  unsandboxedLimits?: PoolLimits;
  paths: SandboxPaths;
  memoryMb: number;
  environment: () => Promise<ChildEnvironment>;
  /** A package held to a list of hosts: its egress proxy, ended with the pool. */
  egress?: PackageEgress | undefined;
  /** Spare processes this pool may take one of, rather than start its own (see spares.ts). */
  spares?: ProcessSpares | undefined;
}

/** One process of a pool and the call it holds (one at a time: its tools run on its one thread). */
export interface Live {
  child: DomainChild;
  ready: boolean;
  /** The call sent to it that it has not given back (replied to), answered by the host or not. */
  holding: ProcessCall | undefined;
  faults: number;
  /** Its tmp folder (a spare's is its own): where its calls' tmpDirs are. */
  tmpDir: string;
  /** The call whose turn started this process: it is sent the moment the process is ready. */
  first: ProcessCall | undefined;
  /** When it last had nothing to do: of the idle ones, the one idle longest is ended first. */
  idleSince: number;
  /** Ends it once it has had nothing to do for `idleTimeoutMs`. */
  idleTimer: NodeJS.Timeout | undefined;
  /** It was a spare: once the pool's calls settle, another spare is made in its place. */
  fromSpare: boolean;
}

/** A process for the pool, before it has one: `startLive` gives it its process. */
export function newLive(first: ProcessCall | undefined, tmpDir: string): Live {
  return {
    child: undefined as unknown as DomainChild,
    ready: false,
    holding: undefined,
    faults: 0,
    tmpDir,
    first,
    idleSince: 0,
    idleTimer: undefined,
    fromSpare: false,
  };
}

/** What the pool hears of its process. */
export interface LiveHandlers {
  /** `live.ready` has just become true. */
  onReady: () => void;
  onNote: (note: ChildNote) => void;
  onEnd: (end: ChildEnd) => void;
  /** Whether the pool still wants a process for `live` (it is its current one and not closed). */
  stillWanted: () => boolean;
}

/** Gives `live` its process: a spare when one may hold this package, else one of its own. */
export function startLive(live: Live, options: LiveOptions, handlers: LiveHandlers): void {
  if (!takeSpare(live, options, handlers)) startOwn(live, options, handlers);
}

/** A process of the pool's own for `live`, started with the package's paths bound. */
function startOwn(live: Live, options: LiveOptions, handlers: LiveHandlers): void {
  const { limits, paths, memoryMb } = options;
  live.tmpDir = limits.call.tmpDir;
  const limitsHere = ({ sandbox }: ChildEnvironment) =>
    sandbox.available ? limits : (options.unsandboxedLimits ?? limits);
  live.child = new DomainChild({
    init: (environment) => ({ type: 'init', mode: 'calls', limits: limitsHere(environment) }),
    nodeFlags: (environment) => {
      const here = limitsHere(environment);
      return callProcessFlags(here, here.execArgv);
    },
    paths,
    memoryMb,
    heapMb: limits.heapMb,
    replyLimits: limits.call,
    environment: options.environment,
    egress: options.egress,
    onReady: () => {
      live.ready = true;
      handlers.onReady();
    },
    onNote: handlers.onNote,
    onEnd: handlers.onEnd,
  });
}

/**
 * Takes a spare process for `live`, if one may hold this package: it is ready for calls once it
 * has said it is ready and the package's snapshot is in place in it.
 */
function takeSpare(live: Live, options: LiveOptions, handlers: LiveHandlers): boolean {
  const state = { started: false, placed: false };
  const becomeReady = () => {
    if (!state.started || !state.placed || live.ready || live.child.ending) return;
    live.ready = true;
    handlers.onReady();
  };
  // A package held to hosts gets its proxy's door bound at start: no spare has it.
  if (options.egress !== undefined) return false;
  const taken = options.spares?.take(options.limits, options.paths, {
    onReady: () => {
      state.started = true;
      becomeReady();
    },
    onNote: handlers.onNote,
    onEnd: handlers.onEnd,
  });
  if (taken === undefined) return false;
  live.child = taken.child;
  live.tmpDir = taken.tmpDir;
  live.fromSpare = true;
  state.started = taken.child.ready;
  void taken.placed.then((placed) => {
    state.placed = placed;
    if (placed) becomeReady();
    // Its package could not be placed in the spare (a folder went while it was mirrored), and the
    // spare has ended: the pool starts a process of its own on the same place, as without spares.
    else if (handlers.stillWanted()) {
      startOwn(live, options, handlers);
      // Held as the spare was: the call it was taken for waits on it.
      live.child.busy = true;
    }
    // Or the pool no longer wants it (it closed meanwhile): it hears that its process is gone.
    else handlers.onEnd({ cause: 'ended', message: 'was ended by the host' });
  });
  return true;
}
