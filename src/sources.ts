/**
 * Sources: changing sets of tool packages. A source yields the paths of the packages (or module
 * files) that should be loaded right now — a list, a function, or a watched folder of packages.
 * Refreshing a source loads what is new or changed, unloads what went away, and never throws for
 * a package that can't be read: that is a left-out state in `host.status()`.
 */
import { type FSWatcher, watch } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

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

/** Serves one source: remembers what it loaded, serialises refreshes. */
export class ServedSource implements ToolSourceHandle {
  readonly #list: () => Promise<Iterable<string>>;
  readonly #host: SourceHost;
  readonly #onClose: () => void;
  #loaded = new Set<string>();
  #running: Promise<SourceRefresh> | undefined;
  #again = false;
  #closed = false;

  constructor(list: () => Promise<Iterable<string>>, host: SourceHost, onClose: () => void) {
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
      current = new Set([...(await this.#list())].map((path) => resolve(path)));
    } catch (error) {
      report.failed.push({
        path: '(source)',
        reason: `the source could not be listed: ${(error as Error).message}`,
      });
      return report;
    }
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

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose();
    await this.#running?.catch(() => {});
    for (const path of this.#loaded) this.#host.unloadPath(path);
    this.#loaded.clear();
  }
}

export function listFromSource(source: ToolSource): () => Promise<Iterable<string>> {
  if (typeof source === 'function') return async () => source();
  const paths = [...source];
  return async () => paths;
}

/**
 * The packages in a folder: its subfolders and its `.js` / `.mjs` files. Dot entries and
 * `node_modules` are skipped. The folder is listed once nothing in it changed for `stableMs`
 * (a package caught mid-install waits), or after {@link MAX_STABILITY_CHECKS} tries: what is still
 * half-written then reads as left out, and the watcher reads it again once it changes.
 */
export function listDirectory(directory: string, stableMs: number): () => Promise<string[]> {
  return async () => {
    for (let attempt = 1; ; attempt++) {
      const entries = await readdir(directory, { withFileTypes: true });
      const candidates = entries
        .filter((entry) => !entry.name.startsWith('.') && entry.name !== 'node_modules')
        .filter((entry) => entry.isDirectory() || /\.(m?js)$/.test(entry.name))
        .map((entry) => join(directory, entry.name));
      const before = (await Promise.all(candidates.map(fingerprint))).join('\n');
      await new Promise((settle) => setTimeout(settle, stableMs));
      const after = (await Promise.all(candidates.map(fingerprint))).join('\n');
      if (before === after || attempt >= MAX_STABILITY_CHECKS) return candidates;
    }
  };
}

const MAX_STABILITY_CHECKS = 50;

/** Sizes and times of a package's manifest and listed modules: what changes while it is written. */
async function fingerprint(path: string): Promise<string> {
  const parts: string[] = [];
  const note = async (file: string) => {
    const info = await stat(file).catch(() => undefined);
    parts.push(info === undefined ? `${file}:-` : `${file}:${info.size}:${info.mtimeMs}`);
  };
  await note(path);
  const manifest = join(path, 'package.json');
  await note(manifest);
  const text = await readFile(manifest, 'utf8').catch(() => '');
  parts.push(text);
  try {
    const tools = (JSON.parse(text) as { toolhost?: { tools?: unknown } }).toolhost?.tools;
    if (Array.isArray(tools)) {
      for (const tool of tools) if (typeof tool === 'string') await note(resolve(path, tool));
    }
  } catch {
    // A manifest that doesn't parse yet is part of the fingerprint as text.
  }
  return parts.join('\n');
}

/** Watches a folder (recursively) and calls `onChange` once things have been quiet for `debounceMs`. */
export function watchDirectory(directory: string, debounceMs: number, onChange: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
    timer.unref();
  };
  let watcher: FSWatcher | undefined = watch(directory, { recursive: true, persistent: false }, schedule);
  // A watcher error (the folder removed, too many watches) must not crash the host; the next
  // explicit refresh still works.
  watcher.on('error', () => {
    watcher?.close();
    watcher = undefined;
  });
  return () => {
    clearTimeout(timer);
    watcher?.close();
    watcher = undefined;
  };
}
