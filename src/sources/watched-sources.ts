/**
 * Sources: changing sets of tool packages. A source yields the paths of the packages (or module
 * files) that should be loaded right now — a list, a function, or a watched folder of packages.
 * Refreshing a source loads what is new or changed, unloads what went away, and never throws for
 * a package that can't be read: that is a left-out state in `host.status()`.
 */
import { type FSWatcher, watch } from 'node:fs';
import { resolve } from 'node:path';
import { ToolHostError } from '../boundary/errors.js';
import { listDirectory } from './folder-listing.js';

/** A list of package/module paths, or a function that yields the current list. */
export type ToolSource = readonly string[] | (() => Iterable<string> | Promise<Iterable<string>>);

export interface WatchOptions {
  /** Quiet time after the last change in the folder before it is read again, in ms. @default 250 */
  debounceMs?: number;
  /**
   * A package is read only when its package.json and listed modules are unchanged across this
   * interval (so a package caught mid-install is not read half-written), in ms. @default 100
   */
  stableMs?: number;
}

/** What a refresh did. */
export interface SourceRefresh {
  loaded: string[];
  unloaded: string[];
  /** Paths that could not be loaded (also shown as left out in `host.status()`). */
  failed: Array<{ path: string; reason: string }>;
}

/** A source being served. */
export interface ToolSourceHandle {
  /** Reads the source again now. Refreshes of one source never overlap. */
  refresh(): Promise<SourceRefresh>;
  /** Stops watching and unloads everything this source loaded. */
  close(): Promise<void>;
}

/** What a source needs from the host. */
export interface SourceHost {
  loadPath(path: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  unloadPath(path: string): void;
}

/** The host as {@link ServedSource} uses it. */
export interface ServingHost {
  load(path: string): Promise<unknown>;
  unload(path: string): boolean;
  /** Records (or clears, with undefined) why a path a source yielded can't be loaded. */
  setProblem(path: string, reason: string | undefined): void;
  readonly closed: boolean;
}

/**
 * A source's loads: a path that can't be loaded (a caller's mistake when given to `load`) is shown
 * as left out instead, with the reason, and cleared once it loads.
 */
export function sourceHost(host: ServingHost): SourceHost {
  return {
    loadPath: async (path) => {
      try {
        await host.load(path);
        host.setProblem(path, undefined);
        return { ok: true };
      } catch (error) {
        if (!(error instanceof ToolHostError) || host.closed) throw error;
        host.unload(path);
        host.setProblem(path, error.message);
        return { ok: false, reason: error.message };
      }
    },
    unloadPath: (path) => {
      if (!host.closed) host.unload(path);
    },
  };
}

/** Serves one source: remembers what it loaded, serialises refreshes. */
/** Lists a source's paths now; the signal aborts when the source stops. */
export type SourceLister = (signal: AbortSignal) => Promise<Iterable<string>>;

export class ServedSource implements ToolSourceHandle {
  readonly #list: SourceLister;
  readonly #host: SourceHost;
  readonly #onClose: () => void;
  /** Aborts a listing in progress (a watched folder waiting to settle) when the source stops. */
  readonly #stopping = new AbortController();
  #loaded = new Set<string>();
  #running: Promise<SourceRefresh> | undefined;
  #again = false;
  #closed = false;

  constructor(
    list: (signal: AbortSignal) => Promise<Iterable<string>>,
    host: SourceHost,
    onClose: () => void,
  ) {
    this.#list = list;
    this.#host = host;
    this.#onClose = onClose;
  }

  refresh(): Promise<SourceRefresh> {
    if (this.#running !== undefined) {
      // A refresh asked for while one runs is folded into one more run after it.
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#refreshLoop().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #refreshLoop(): Promise<SourceRefresh> {
    let report: SourceRefresh;
    do {
      this.#again = false;
      report = await this.#refreshOnce();
    } while (this.#again && !this.#closed);
    return report;
  }

  async #refreshOnce(): Promise<SourceRefresh> {
    const report: SourceRefresh = { loaded: [], unloaded: [], failed: [] };
    if (this.#closed) return report;
    let current: Set<string>;
    try {
      current = new Set([...(await this.#list(this.#stopping.signal))].map((path) => resolve(path)));
    } catch (error) {
      if (this.#closed) return report;
      report.failed.push({
        path: '(source)',
        reason: `the source could not be listed: ${(error as Error).message}`,
      });
      return report;
    }
    if (this.#closed) return report;
    for (const path of this.#loaded) {
      if (!current.has(path)) {
        this.#host.unloadPath(path);
        report.unloaded.push(path);
      }
    }
    this.#loaded = current;
    await Promise.all(
      [...current].map(async (path) => {
        const result = await this.#host.loadPath(path);
        if (result.ok) report.loaded.push(path);
        else report.failed.push({ path, reason: result.reason });
      }),
    );
    return report;
  }

  /** Stops at once (the host is closing): no more refreshes, nothing waited for, nothing unloaded. */
  stop(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopping.abort();
    this.#onClose();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.stop();
    await this.#running?.catch(() => {});
    for (const path of this.#loaded) this.#host.unloadPath(path);
    this.#loaded.clear();
  }
}

/** A watched folder of packages: how to list it, and its watchers. */
export interface WatchedFolder {
  list(signal: AbortSignal): Promise<string[]>;
  /** Starts watching (after the first listing, so the first load is not read twice). */
  start(): void;
  close(): void;
}

/**
 * A folder of packages, watched: its entries, and the real folders of the entries that are
 * symbolic links (`npm link`, pnpm and plugin managers install packages that way), since a change
 * inside a linked package happens outside the watched folder.
 */
export function watchFolder(
  directory: string,
  options: { debounceMs: number; stableMs: number; onChange: () => void },
): WatchedFolder {
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let closed = false;
  const watchers = new Map<string, FSWatcher>();
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(options.onChange, options.debounceMs);
    timer.unref();
  };
  const follow = (folder: string) => {
    if (watchers.has(folder) || closed) return;
    try {
      const watcher = watch(folder, { recursive: true, persistent: false }, schedule);
      // A watcher error (the folder removed, too many watches) must not crash the host; the next
      // explicit refresh still works.
      watcher.on('error', () => {
        watcher.close();
        if (watchers.get(folder) === watcher) watchers.delete(folder);
      });
      watchers.set(folder, watcher);
    } catch {
      // The folder went away between the listing and now: the next change lists it again.
    }
  };
  let linked = new Set<string>();
  const updateLinks = (targets: Set<string>) => {
    for (const target of linked) {
      if (!targets.has(target)) {
        watchers.get(target)?.close();
        watchers.delete(target);
      }
    }
    linked = targets;
    if (started) for (const target of targets) follow(target);
  };
  return {
    list: async (signal) => {
      const { candidates, linkedFolders } = await listDirectory(directory, options.stableMs, signal);
      updateLinks(linkedFolders);
      return candidates;
    },
    start: () => {
      started = true;
      follow(directory);
      for (const target of linked) follow(target);
    },
    close: () => {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
