/**
 * The sources a host serves (`host.addSource`, `host.watch`): each one loads and unloads through
 * the host, records the paths it can't load as the registry's problems, and is stopped when the
 * host closes.
 */
import { resolve } from 'node:path';
import { ToolHostError } from '../boundary/errors.js';
import type { Registry } from '../registry/registry.js';
import { expectPositiveInteger } from '../shared/expect.js';
import { resolveSource } from '../sources/resolve-path.js';
import {
  ServedSource,
  type SourceLister,
  sourceHost,
  type ToolSource,
  type ToolSourceHandle,
  type WatchOptions,
  watchFolder,
} from '../sources/watched-sources.js';

/** What serving needs of the host: its registry, its unload and its fault report. */
export interface ServingParts {
  registry: Registry;
  unload(path: string): boolean;
  fault(source: string, message: string): void;
}

export class ServedSources {
  readonly #parts: ServingParts;
  readonly #served = new Set<ServedSource>();

  constructor(parts: ServingParts) {
    this.#parts = parts;
  }

  /** Serves a list, or a function yielding the current list; loads it now, each path with `load`. */
  async add(source: ToolSource, load: (path: string) => Promise<unknown>): Promise<ToolSourceHandle> {
    const list = typeof source === 'function' ? async () => source() : async () => [...source];
    const served = this.#serve(list, load);
    await served.refresh();
    return served;
  }

  /** Serves a folder of tool packages and watches it. */
  async watch(
    directory: string,
    options: WatchOptions,
    load: (path: string) => Promise<unknown>,
  ): Promise<ToolSourceHandle> {
    expectPositiveInteger('debounceMs', options.debounceMs);
    expectPositiveInteger('stableMs', options.stableMs);
    const root = resolve(directory);
    await resolveSource(root).catch((error: unknown) => {
      // A folder of packages has no package.json itself; only a missing folder is a mistake here.
      if (error instanceof ToolHostError && error.code === 'PATH_NOT_FOUND') throw error;
    });
    const folder = watchFolder(root, {
      debounceMs: options.debounceMs ?? 250,
      stableMs: options.stableMs ?? 100,
      onChange: () => {
        served
          .refresh()
          .catch((error: unknown) => this.#parts.fault(root, `refreshing failed: ${String(error)}`));
      },
    });
    const served = this.#serve(folder.list, load, folder.close);
    await served.refresh();
    folder.start();
    return served;
  }

  /** Stops every source (the host is closing); what they loaded goes with the registry. */
  stop(): void {
    for (const served of [...this.#served]) served.stop();
  }

  #serve(
    list: SourceLister,
    load: (path: string) => Promise<unknown>,
    onClose: () => void = () => {},
  ): ServedSource {
    const { registry, unload } = this.#parts;
    const host = {
      load,
      unload,
      setProblem: (path: string, reason: string | undefined) => {
        if (reason !== undefined || registry.hasProblem(path))
          registry.publish({ type: 'problem', path, reason });
      },
      get closed() {
        return registry.closed;
      },
    };
    const served = new ServedSource(list, sourceHost(host), () => {
      this.#served.delete(served);
      onClose();
    });
    this.#served.add(served);
    return served;
  }
}
