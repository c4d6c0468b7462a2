/**
 * Spare package processes: one sandboxed process started before a package needs it, readied for
 * calls (toolhost's code loaded, its guards in place), so that a package's first call waits for
 * neither bubblewrap nor Node's start. A spare belongs to no package until a pool takes it, and then
 * to that pool only: it is never handed back, and a process that has run one package's code never
 * runs another's.
 *
 * A sandbox's bind mounts are fixed when bubblewrap starts, before the package is known. So a spare
 * gets, read-only at the host's tmp root, a folder of its own that only the host writes (its
 * overlay), holding nothing but the mount point of its own tmp folder. Taken by a pool, the host
 * mirrors the package's snapshot into the overlay (spare-mirror.ts), and the snapshot appears in
 * the sandbox at its own path, beside nothing of any other package. A spare is used only where
 * that holds: a sandbox (without one, a process gets flags naming the package's folders),
 * a package with no network (the network is a namespace chosen at start), a snapshot under the tmp
 * root, and a pool whose limits the spare was made with.
 *
 * A spare counts against the host's worker budget like a package process: it starts only when a
 * place is free and no pool waits for one, it is the first unit ended when a pool needs room, and a
 * pool that takes it takes its place with it (so a host never runs more package processes and
 * spares together than `maxWorkers`).
 */
import { join, relative } from 'node:path';
import type { ReplyLimits } from '../../boundary/parse-call-reply.js';
import type { BudgetMember, NextStart } from '../../calls/budget-member.js';
import type { PoolLimits } from '../../calls/pool-workers.js';
import { WorkerBudget } from '../../calls/worker-budget.js';
import { isWithin } from '../../shared/paths.js';
import type { ChildEnvironment } from '../sandbox/process-tier.js';
import { codePaths, type SandboxPaths } from '../sandbox/sandbox.js';
import type { ChildEnd } from './child-end.js';
import type { DomainChild } from './domain-child.js';
import { mirrorSnapshot } from './spare-mirror.js';
import { limitsKey, type Spare, type SpareHandlers, startSpare } from './spare-process.js';

export interface SpareSettings {
  /** The host's tmp root: spares' folders are made in it, and their overlays bound over it. */
  tmpRoot: string;
  memoryMb: number;
  /** How many spares are kept ready (0: none). */
  count: number;
  environment: () => Promise<ChildEnvironment>;
  /** The host's worker budget, where each spare counts one until a pool takes it. @default none */
  budget?: WorkerBudget;
}

/** A spare taken by a pool: its process, its tmp folder, and when the package is in place. */
export interface TakenSpare {
  child: DomainChild;
  tmpDir: string;
  /**
   * Resolves once the snapshot is mirrored; `false` when it could not be, once the process has
   * ended (until then its place is still the pool's).
   */
  placed: Promise<boolean>;
}

export class ProcessSpares implements BudgetMember {
  readonly #settings: SpareSettings;
  readonly #budget: WorkerBudget;
  /** Spares no pool has taken. */
  readonly #ready = new Set<Spare>();
  /** Spares no pool has taken whose process has not ended (those ended and not yet gone too). */
  readonly #alive = new Set<Spare>();
  #counter = 0;
  #closed = false;
  readonly source = 'spare';
  readonly standby = true;
  readonly queued = 0;
  readonly resting = true;

  constructor(settings: SpareSettings) {
    this.#settings = settings;
    this.#budget = settings.budget ?? new WorkerBudget(Number.POSITIVE_INFINITY);
    this.#budget.join(this);
  }

  get occupied(): number {
    return this.#alive.size;
  }

  get ending(): number {
    let count = 0;
    for (const spare of this.#alive) if (spare.child.ending) count += 1;
    return count;
  }

  get idle(): number {
    return this.#ready.size;
  }

  nextStart(): NextStart {
    return 'wait';
  }

  startNext(): boolean {
    return false;
  }

  /** Ends a spare to give its place to a pool. */
  endIdle(): boolean {
    const [spare] = this.#ready;
    if (spare === undefined) return false;
    this.#ready.delete(spare);
    spare.child.kill(ended);
    return true;
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
    for (const spare of this.#ready) {
      if (spare.key === key) continue;
      this.#ready.delete(spare);
      spare.child.kill(ended);
    }
    // A spare takes a place of the budget: only a free one that no pool waits for.
    while (this.#ready.size < this.#settings.count && this.#budget.hasRoom) {
      try {
        this.#start(limits, key, replyLimits);
      } catch {
        // Its folders could not be made: pools start processes of their own, as without spares.
        return;
      } finally {
        this.#budget.changed(this);
      }
    }
  }

  /**
   * Whether {@link take} would give a pool with `limits` and `paths` a spare now. A pool whose
   * package is held to hosts never asks: its egress proxy is bound when its process starts.
   */
  fits(limits: PoolLimits, paths: SandboxPaths): boolean {
    return this.#fitting(limits, paths) !== undefined;
  }

  #fitting(limits: PoolLimits, paths: SandboxPaths): { spare: Spare; snapshot: string } | undefined {
    const snapshot = paths.readOnly.length === 1 ? paths.readOnly[0] : undefined;
    if (snapshot === undefined || paths.network || paths.egress !== undefined) return undefined;
    if (!isWithin(this.#settings.tmpRoot, snapshot)) return undefined;
    const key = limitsKey(limits);
    const spare = [...this.#ready].find((one) => one.key === key && !one.child.ending);
    return spare === undefined ? undefined : { spare, snapshot };
  }

  /**
   * A spare for a pool with `limits` and `paths`, adopted by `handlers`; `undefined` when there is
   * none that may hold that package (the pool then starts a process of its own). A pool whose
   * package is held to hosts never asks: its egress proxy is bound when its process starts.
   */
  take(limits: PoolLimits, paths: SandboxPaths, handlers: SpareHandlers): TakenSpare | undefined {
    const fitting = this.#fitting(limits, paths);
    if (fitting === undefined) return undefined;
    const { spare, snapshot } = fitting;
    this.#ready.delete(spare);
    // Its place is the pool's from now on (the pool counts its process).
    this.#alive.delete(spare);
    this.#budget.changed(this);
    clearTimeout(spare.idle);
    spare.handlers = handlers;
    const mirrored = mirrorSnapshot(
      snapshot,
      join(spare.overlay, relative(this.#settings.tmpRoot, snapshot)),
    );
    const placed = mirrored
      .catch(() => false)
      .then(
        (done) =>
          done ||
          new Promise<boolean>((resolve) => {
            // The pool starts a process of its own instead, once this one is gone (it holds the
            // pool's place until then): this one's end is no longer its business.
            spare.handlers = { onReady: () => {}, onNote: () => {}, onEnd: () => resolve(false) };
            if (spare.gone) resolve(false);
            else spare.child.kill(ended);
          }),
      );
    return { child: spare.child, tmpDir: spare.tmpDir, placed };
  }

  /** Ends every spare still waiting; resolves once they are gone. */
  close(): Promise<void> {
    this.#closed = true;
    this.#budget.leave(this);
    const gone = [...this.#alive].map(
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
    const spare = startSpare(this.#settings, {
      limits,
      key,
      replyLimits,
      name: `${process.pid}-${++this.#counter}`,
      onGone: (gone) => {
        clearTimeout(gone.idle);
        this.#ready.delete(gone);
        this.#alive.delete(gone);
        this.#budget.changed(this);
      },
    });
    this.#ready.add(spare);
    this.#alive.add(spare);
    // Unused, it ends as an idle package process does (the next load or first call makes another).
    spare.idle = setTimeout(() => {
      this.#ready.delete(spare);
      spare.child.kill(ended);
    }, limits.idleTimeoutMs);
    spare.idle.unref();
  }
}

const ended: ChildEnd = { cause: 'ended', message: 'was ended by the host' };
