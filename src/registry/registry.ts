/**
 * The registry: what is loaded (each source's current version, the host's own tools, the sources
 * that could not be loaded), the load order that settles name clashes, the re-read schedules, and
 * the generation everyone reads.
 *
 * {@link Registry.publish} is the only way anything here changes, and the only place a generation
 * is made: it applies one change and swaps in the next generation in one synchronous step. A new
 * version of a source is published only once every module of it has been read, so readers of the
 * registry (`list`, `status`, `call`) see either the whole old version or the whole new one.
 */
import { resolve } from 'node:path';
import type { PinnableModule, UnpinnableModule } from '../lock/pin.js';
import type { Pins } from '../lock/pins.js';
import {
  buildGeneration,
  EMPTY_GENERATION,
  type Generation,
  type ModuleRead,
  type ModuleRecord,
  type OfferedTool,
  type PinCheck,
  type SourceProblem,
  type SourceVersion,
} from './generation.js';
import { pinCheckOf, pinnableModules } from './pinning.js';
import { type Clock, RereadSchedule } from './reread-schedule.js';

/** One change to the registry. */
export type RegistryChange =
  /** A new version of a source replaces its old one (if `ticket` is the newest load that finished). */
  | { type: 'source'; version: SourceVersion; ticket: number }
  | { type: 'unload'; root: string }
  /** A path a source yielded that could not be loaded (`reason`), or no longer so (undefined). */
  | { type: 'problem'; path: string; reason: string | undefined }
  | { type: 'host-tool'; name: string; tool: OfferedTool | undefined }
  /** A re-read of a module of a current version ended. */
  | { type: 'reread'; record: ModuleRecord; read: ModuleRead }
  /** A re-read schedule moved on (its next time, or it gave up): only statuses change. */
  | { type: 'schedule' }
  /** The lock file changed: what it lets through is judged again. */
  | { type: 'lock' };

/** What one publish did, for those who act on it (events, pools, snapshots). */
export interface Published {
  previous: Generation;
  next: Generation;
  /** Versions no longer current: their pools drain and their snapshots go once nothing uses them. */
  retired: SourceVersion[];
}

export interface RegistryOptions {
  rereadDelaysMs: readonly number[];
  clock: Clock;
  /** Reads a module of a current version again, for its re-read schedule. */
  reread(record: ModuleRecord): Promise<ModuleRead>;
  /** Hears every publish, in order, synchronously, before `publish` returns. */
  onPublished(published: Published): void;
  /** The lock every module read is held to; without one, everything that checks out is offered. */
  pins?: Pins | undefined;
}

export class Registry {
  readonly #options: RegistryOptions;
  #generation: Generation = EMPTY_GENERATION;
  readonly #hostTools = new Map<string, OfferedTool>();
  readonly #sources = new Map<string, SourceVersion>();
  readonly #problems = new Map<string, SourceProblem>();
  /** Per source root: the newest load started and the one whose version is current. */
  readonly #tickets = new Map<string, { started: number; published: number }>();
  /** Load order per module (by root and path), handed out when a load starts. */
  readonly #orders = new Map<string, number>();
  #order = 0;
  /** The root each path given to `load` resolved to, so `unload` finds it by either. */
  readonly #rootByPath = new Map<string, string>();
  #closed = false;
  readonly #pinCheck: PinCheck | undefined;

  constructor(options: RegistryOptions) {
    this.#options = options;
    this.#pinCheck = pinCheckOf(options.pins);
  }

  /**
   * Reads the lock file again if it changed, and judges every module against it anew. Called as
   * each load starts, so a load after pinning sees the new pins even when the package itself is
   * unchanged.
   */
  refreshPins(): void {
    if (this.#options.pins?.refresh() === true) this.publish({ type: 'lock' });
  }

  /**
   * The modules whose declarations were read and checked and that are offered, or withheld only by
   * the lock: what pinning records, and those a lock can't pin (see {@link pinnableModules}).
   */
  /** Digests what every loaded MCP server runs, for {@link pinnable} to pin it with its tools. */
  async prepareServerRuns(): Promise<void> {
    await Promise.all([...this.#sources.values()].map((version) => version.servers?.prepareRuns()));
  }

  pinnable(): { pinnable: PinnableModule[]; unpinnable: UnpinnableModule[] } {
    return pinnableModules(this.#sources.values(), this.#generation.statuses);
  }

  get generation(): Generation {
    return this.#generation;
  }

  /** The host closed: nothing is published any more. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The current version of a source. */
  source(root: string): SourceVersion | undefined {
    return this.#sources.get(root);
  }

  hasHostTool(name: string): boolean {
    return this.#hostTools.has(name);
  }

  hasProblem(path: string): boolean {
    return this.#problems.has(path);
  }

  /** A loaded package (not the module itself loaded alone) that serves the module file `path`. */
  packageServing(path: string): SourceVersion | undefined {
    for (const version of this.#sources.values()) {
      if (version.kind === 'package' && version.modules.some((record) => record.path === path))
        return version;
    }
    return undefined;
  }

  /** The source root `path` (as given to `load`) stands for. */
  rootOf(path: string, realPath: (absolute: string) => string): string {
    const absolute = resolve(path);
    return this.#rootByPath.get(absolute) ?? realPath(absolute);
  }

  rememberRoot(path: string, root: string): void {
    this.#rootByPath.set(resolve(path), root);
  }

  /**
   * Starts a load of `root`: hands out load order to its modules in listed order (before any read
   * finishes, so the order of reads can't decide a clash) and a ticket for {@link publish}.
   */
  beginLoad(root: string, listed: readonly string[]): { ticket: number; orderOf(path: string): number } {
    for (const path of listed) {
      const key = `${root}\0${path}`;
      if (!this.#orders.has(key)) this.#orders.set(key, ++this.#order);
    }
    const tickets = this.#tickets.get(root) ?? { started: 0, published: 0 };
    this.#tickets.set(root, tickets);
    tickets.started += 1;
    return {
      ticket: tickets.started,
      orderOf: (path) => this.#orders.get(`${root}\0${path}`) ?? ++this.#order,
    };
  }

  /** Applies one change and publishes the next generation: the only place either happens. */
  publish(change: RegistryChange): Generation {
    if (this.#closed) return this.#generation;
    const retired: SourceVersion[] = [];
    switch (change.type) {
      case 'source': {
        const { root } = change.version;
        const tickets = this.#tickets.get(root);
        // A load that started before the one now current (or before an unload) is stale.
        if (tickets === undefined || change.ticket <= tickets.published) return this.#generation;
        tickets.published = change.ticket;
        const old = this.#sources.get(root);
        if (old !== undefined) retired.push(old);
        // A place in load order goes with the last record that uses it (an MCP server's tools all
        // use their server entry's, listed or not).
        const listed = new Set(change.version.modules.map((record) => record.path));
        const used = new Set(change.version.modules.map((record) => record.order));
        for (const record of old?.modules ?? []) {
          const key = `${root}\0${record.path}`;
          if (!listed.has(record.path) && !used.has(this.#orders.get(key) as number))
            this.#orders.delete(key);
        }
        this.#startRereads(change.version);
        this.#sources.set(root, change.version);
        break;
      }
      case 'unload': {
        const old = this.#sources.get(change.root);
        if (old !== undefined) retired.push(old);
        this.#sources.delete(change.root);
        const tickets = this.#tickets.get(change.root);
        if (tickets !== undefined) tickets.published = tickets.started;
        for (const key of this.#orders.keys())
          if (key.startsWith(`${change.root}\0`)) this.#orders.delete(key);
        for (const [alias, root] of this.#rootByPath)
          if (root === change.root) this.#rootByPath.delete(alias);
        break;
      }
      case 'problem':
        if (change.reason === undefined) this.#problems.delete(change.path);
        else this.#problems.set(change.path, { path: change.path, reason: change.reason });
        break;
      case 'host-tool':
        if (change.tool === undefined) this.#hostTools.delete(change.name);
        else this.#hostTools.set(change.name, change.tool);
        break;
      case 'reread':
        if (!this.#isCurrent(change.record)) return this.#generation;
        change.record.read = change.read;
        break;
      case 'schedule':
      case 'lock':
        break;
    }
    const previous = this.#generation;
    this.#generation = buildGeneration(
      previous.number + 1,
      this.#hostTools,
      this.#sources.values(),
      this.#problems.values(),
      this.#pinCheck,
    );
    for (const version of retired) retire(version);
    this.#options.onPublished({ previous, next: this.#generation, retired });
    return this.#generation;
  }

  /** Cancels every re-read; nothing is published after this. */
  close(): void {
    this.#closed = true;
    for (const version of this.#sources.values()) retire(version);
  }

  #isCurrent(record: ModuleRecord): boolean {
    return !this.#closed && this.#sources.get(record.source.root) === record.source;
  }

  /** Gives each module of `version` whose read ran over its time bound a re-read schedule. */
  #startRereads(version: SourceVersion): void {
    const { rereadDelaysMs, clock } = this.#options;
    if (rereadDelaysMs.length === 0) return;
    for (const record of version.modules) {
      const read = record.read;
      if (read.kind !== 'timed-out' || read.schedule !== undefined) continue;
      read.schedule = new RereadSchedule(rereadDelaysMs, clock, {
        onScheduled: () => this.publish({ type: 'schedule' }),
        read: async () => {
          if (!this.#isCurrent(record) || record.read !== read) return false;
          const again = await this.#options.reread(record);
          if (!this.#isCurrent(record) || record.read !== read) return false;
          if (again.kind === 'timed-out') return true;
          this.publish({ type: 'reread', record, read: again });
          return false;
        },
        onGiveUp: () => {
          read.schedule = undefined;
          this.publish({ type: 'schedule' });
        },
      });
    }
  }
}

/** Lets go of what a version held: its re-read schedules (its validators, each with an Ajv of its own, are collected with it). */
function retire(version: SourceVersion): void {
  for (const record of version.modules) {
    if (record.read.kind === 'timed-out') record.read.schedule?.cancel();
  }
}
