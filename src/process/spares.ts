/**
 * Spare package processes: one sandboxed process started before a package needs it, with its pool
 * made and a worker started, so that a package's first call waits for neither bubblewrap, Node's
 * start, nor a worker's. A spare belongs to no package until a pool takes it, and then to that pool
 * only: it is never handed back, and a process that has run one package's code never runs another's.
 *
 * A sandbox's bind mounts are fixed when bubblewrap starts, before the package is known. So a spare
 * gets, read-only at the host's tmp root, a folder of its own that only the host writes (its
 * overlay), holding nothing but the mount point of its own tmp folder. Taken by a pool, the host
 * mirrors the package's snapshot into the overlay (spare-mirror.ts), and the snapshot appears in
 * the sandbox at its own path, beside nothing of any other package. A spare is used only where
 * that holds: a sandbox (without one, a process's workers get flags naming the package's folders),
 * a package with no network (the network is a namespace chosen at start), a snapshot under the tmp
 * root, and a pool whose limits the spare was made with.
 */
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ReplyLimits } from '../boundary/parse-call-reply.js';
import type { PoolLimits } from '../calls/worker-pool.js';
import { isWithin } from '../shared/paths.js';
import type { ChildNote } from './child-messages.js';
import { type ChildEnd, type ChildEnvironment, DomainChild } from './domain-child.js';
import { codePaths, type SandboxPaths } from './sandbox.js';
import { mirrorSnapshot } from './spare-mirror.js';

/** What a spare's owner hears from it: the spares', then a pool's once one has taken it. */
export interface SpareHandlers {
  onReady(): void;
  onNote(note: ChildNote): void;
  onEnd(end: ChildEnd): void;
}

export interface SpareSettings {
  /** The host's tmp root: spares' folders are made in it, and their overlays bound over it. */
  tmpRoot: string;
  memoryMb: number;
  allowAddons: boolean;
  /** How many spares are kept ready (0: none). */
  count: number;
  environment: () => Promise<ChildEnvironment>;
}

/** A spare taken by a pool: its process, its tmp folder, and when the package is in place. */
export interface TakenSpare {
  child: DomainChild;
  tmpDir: string;
  /** Resolves once the snapshot is mirrored; `false` when it could not be (the process is ended). */
  placed: Promise<boolean>;
}

interface Spare {
  child: DomainChild;
  key: string;
  folder: string;
  overlay: string;
  tmpDir: string;
  /** Which handlers hear it: the spares', then a pool's. */
  handlers: SpareHandlers;
  idle?: NodeJS.Timeout;
}

/** Limits as a spare must match them: all but the tmp folder, which is the spare's own. */
function limitsKey(limits: PoolLimits): string {
  return JSON.stringify({ ...limits, call: { ...limits.call, tmpDir: '' } });
}

export class ProcessSpares {
  readonly #settings: SpareSettings;
  readonly #ready = new Set<Spare>();
  #counter = 0;
  #closed = false;

  constructor(settings: SpareSettings) {
    this.#settings = settings;
  }

  /**
   * Starts spares for pools with `limits` until `count` wait (where the sandbox is there to hold
   * them). Called when a package is loaded and when a spare is taken.
   */
  async replenish(limits: PoolLimits, replyLimits: ReplyLimits): Promise<void> {
    if (this.#closed || this.#settings.count <= 0) return;
    const environment = await this.#settings.environment();
    if (!environment.sandbox.available || this.#closed) return;
    const root = this.#settings.tmpRoot;
    // An overlay over the tmp root would hide toolhost's own code or Node if they were in it.
    if (codePaths().some((path) => isWithin(root, path))) return;
    const key = limitsKey(limits);
    for (const spare of this.#ready) if (spare.key !== key) spare.child.kill(ended);
    while (this.#ready.size < this.#settings.count) {
      try {
        this.#start(limits, key, replyLimits);
      } catch {
        // Its folders could not be made: pools start processes of their own, as without spares.
        return;
      }
    }
  }

  /**
   * A spare for a pool with `limits` and `paths`, adopted by `handlers`; `undefined` when there is
   * none that may hold that package (the pool then starts a process of its own). A pool whose
   * package is held to hosts never asks: its egress proxy is bound when its process starts.
   */
  take(limits: PoolLimits, paths: SandboxPaths, handlers: SpareHandlers): TakenSpare | undefined {
    const snapshot = paths.readOnly.length === 1 ? paths.readOnly[0] : undefined;
    if (snapshot === undefined || paths.network || paths.egress !== undefined) return undefined;
    if (!isWithin(this.#settings.tmpRoot, snapshot)) return undefined;
    const key = limitsKey(limits);
    const spare = [...this.#ready].find((one) => one.key === key && !one.child.ending);
    if (spare === undefined) return undefined;
    this.#ready.delete(spare);
    clearTimeout(spare.idle);
    spare.handlers = handlers;
    const placed = mirrorSnapshot(snapshot, join(spare.overlay, relative(this.#settings.tmpRoot, snapshot)))
      .catch(() => false)
      .then((mirrored) => {
        if (mirrored) return true;
        // The pool starts a process of its own instead: this one's end is no longer its business.
        spare.handlers = { onReady: () => {}, onNote: () => {}, onEnd: () => {} };
        spare.child.kill(ended);
        return false;
      });
    return { child: spare.child, tmpDir: spare.tmpDir, placed };
  }

  /** Ends every spare still waiting; resolves once they are gone. */
  close(): Promise<void> {
    this.#closed = true;
    const gone = [...this.#ready].map(
      (spare) =>
        new Promise<void>((resolve) => {
          const { onEnd } = spare.handlers;
          spare.handlers = {
            ...spare.handlers,
            onEnd: (end) => {
              onEnd(end);
              resolve();
            },
          };
          // Whoever awaits this is owed its end: the process holds the event loop until then.
          spare.child.busy = true;
          spare.child.kill(ended);
        }),
    );
    return Promise.all(gone).then(() => {});
  }

  #start(limits: PoolLimits, key: string, replyLimits: ReplyLimits): void {
    const { tmpRoot, memoryMb, allowAddons, environment } = this.#settings;
    const folder = join(tmpRoot, 'spares', `${process.pid}-${++this.#counter}`);
    const overlay = join(folder, 'overlay');
    const tmpDir = join(folder, 'tmp');
    // The mount point of its tmp folder, inside the overlay that hides the rest of the tmp root.
    mkdirSync(join(overlay, relative(tmpRoot, tmpDir)), { recursive: true });
    const paths: SandboxPaths = {
      readOnly: [],
      tmpDir,
      network: false,
      overlay: { folder: overlay, at: tmpRoot },
    };
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
        onEnd: () => {
          clearTimeout(spare.idle);
          this.#ready.delete(spare);
        },
      },
    };
    spare.child = new DomainChild({
      init: {
        type: 'init',
        mode: 'calls',
        limits: { ...limits, call: { ...limits.call, tmpDir } },
        prestart: true,
      },
      paths,
      allowAddons,
      memoryMb,
      replyLimits,
      environment,
      onReady: () => spare.handlers.onReady(),
      onNote: (note) => spare.handlers.onNote(note),
      onEnd: (end: ChildEnd) => {
        spare.handlers.onEnd(end);
        void rm(folder, { recursive: true, force: true }).catch(() => {});
      },
    });
    this.#ready.add(spare);
    // Unused, it ends as an idle package process does (the next load or first call makes another).
    spare.idle = setTimeout(() => spare.child.kill(ended), limits.idleTimeoutMs);
    spare.idle.unref();
  }
}

const ended: ChildEnd = { cause: 'ended', message: 'was ended by the host' };
