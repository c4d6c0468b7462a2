/**
 * ToolHost: reads tool modules' declarations safely, offers what checks out, and runs every call in
 * a pooled worker of the tool's trust domain with time and memory bounds. A tool's fault is an error
 * outcome; only the host's own misuse throws.
 *
 * A facade over three parts: the {@link Registry} (what is offered: one generation at a time), the
 * {@link DomainPools} (where calls run) and the reading side ({@link readSource}: snapshots and
 * declaration reads).
 */
import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { ToolHostError } from '../boundary/errors.js';
import { errorOutcome, type ToolOutcome } from '../boundary/outcome.js';
import { escapeControl, truncate } from '../boundary/sanitize.js';
import type { WorkerBudgetEvent } from '../calls/budget-member.js';
import { DomainPools } from '../calls/domain-pools.js';
import { invokeTool } from '../calls/invoke.js';
import { DEFAULT_TIER } from '../calls/isolation.js';
import { runSelftests } from '../calls/selftests.js';
import { WorkerFlags } from '../calls/worker-flags.js';
import type { ToolInfo } from '../declaration/check.js';
import { DeclarationCache } from '../declaration/declaration-cache.js';
import { DeclarationReader } from '../declaration/reader.js';
import { DEFAULT_LOCK_FILE_NAME } from '../lock/lock-file.js';
import { watchLockFile } from '../lock/lock-watch.js';
import type { PinReport } from '../lock/pin.js';
import { Pins } from '../lock/pins.js';
import { anthropicTool } from '../loop/anthropic-tool.js';
import { toRunnableTools } from '../loop/runnable-tools.js';
import type { HostTool, ModuleStatus, OfferedTool } from '../registry/generation.js';
import { offeredHostTool } from '../registry/host-tool.js';
import { ModuleReporter } from '../registry/module-events.js';
import { Registry } from '../registry/registry.js';
import { expectFunction, expectPositiveInteger } from '../shared/expect.js';
import { snapshotsFolder } from '../snapshot/layout.js';
import { Snapshots } from '../snapshot/snapshot.js';
import { type LoadingParts, loadSource, unloadSource } from '../sources/load.js';
import { rereadModule } from '../sources/read-version.js';
import type { ToolSource, ToolSourceHandle, WatchOptions } from '../sources/watched-sources.js';
import type { CallOptions } from './call-options.js';
import { callTarget } from './call-target.js';
import type { LoadReport, SelftestReport, ToolHostEvents } from './events.js';
import { hostLoadingParts, pinLoaded, retireVersions } from './host-parts.js';
import { NetworkCounts } from './network-counts.js';
import type { LoadOptions, PinOptions, SelftestOptions, ToolHostOptions } from './options.js';
import { ServedSources } from './served-sources.js';
import { expectLockFile, expectTier, resolveSettings, type Settings } from './settings.js';
import { holdTempRoot, releaseTempRoot, sweepDeadTempRoots } from './temp-root.js';

export class ToolHost extends EventEmitter<ToolHostEvents> {
  readonly #settings: Settings;
  readonly #reader: DeclarationReader;
  readonly #snapshots: Snapshots;
  readonly #pools: DomainPools;
  readonly #registry: Registry;
  readonly #loading: LoadingParts;
  readonly #served: ServedSources;
  /** The sweep of folders left by dead processes, started with the host. */
  readonly #swept: Promise<void>;
  #callSequence = 0;
  readonly #networkCounts: NetworkCounts;
  #closed = false;
  /** Aborts when the host closes: in-process calls still running answer `HOST_CLOSED`. */
  readonly #closing = new AbortController();
  /** Stops watching the lock file. */
  readonly #unwatchLock: () => void;

  constructor(options: ToolHostOptions = {}) {
    super();
    const settings = resolveSettings(options);
    this.#settings = settings;
    this.#networkCounts = new NetworkCounts(
      (event) => this.emit('network', settings.redactor.data(event)),
      settings.logger,
    );
    // First: a lock that can't be used throws before the host holds anything.
    const pins =
      settings.lockFile === undefined
        ? undefined
        : new Pins(settings.lockFile, (message) => settings.logger.warn(message));
    this.#reader = new DeclarationReader(
      settings.readLimits,
      settings.cores,
      new DeclarationCache(join(settings.store.folder, 'declarations')),
    );
    this.#snapshots = new Snapshots(snapshotsFolder(settings.tmpRoot), settings.store);
    this.#pools = new DomainPools(
      settings,
      new WorkerFlags(settings),
      (source, message) => this.#fault(source, message),
      (event) => this.#networkCounts.record(event),
      (event) => this.#workers(event),
    );
    const reporter = new ModuleReporter((event) => this.emit('module', event), settings.logger);
    this.#registry = new Registry({
      rereadDelaysMs: settings.rereadDelaysMs,
      clock: settings.clock,
      reread: (record) => rereadModule(this.#loading, record),
      pins,
      onPublished: ({ next, retired }) => {
        retireVersions(retired, { registry: this.#registry, snapshots: this.#snapshots, pools: this.#pools });
        reporter.report(next);
      },
    });
    this.#loading = hostLoadingParts({
      settings,
      registry: this.#registry,
      snapshots: this.#snapshots,
      reader: this.#reader,
      pools: this.#pools,
      networkCounts: this.#networkCounts,
    });
    this.#served = new ServedSources({
      registry: this.#registry,
      unload: (path) => this.unload(path),
      fault: (source, message) => this.#fault(source, message),
    });
    this.#unwatchLock =
      pins === undefined ? () => {} : watchLockFile(pins.file, () => this.#registry.refreshPins());
    holdTempRoot(settings.tmpRoot);
    this.#swept = sweepDeadTempRoots(dirname(settings.tmpRoot));
  }

  /**
   * Loads a tool package (a folder whose package.json lists `toolhost.tools`, or that package.json)
   * or one module file. The package is snapshotted and each module's declaration is read from the
   * snapshot in a throwaway worker; the new version replaces the old one only once all of it has
   * been read. Rejects only for a caller's mistake (a missing path, a folder that is not a tool package).
   */
  async load(path: string, options: LoadOptions = {}): Promise<LoadReport> {
    this.#assertOpen();
    if (options.isolation !== undefined) expectTier('isolation', options.isolation);
    return loadSource(this.#loading, path, options.isolation ?? this.#settings.isolation ?? DEFAULT_TIER);
  }

  /**
   * Unloads a package or module loaded with {@link load}: its tools are no longer offered, its
   * re-reads stop, and its workers end once their running calls have answered.
   * @returns whether anything was loaded from that path
   */
  unload(path: string): boolean {
    return unloadSource(this.#registry, path);
  }

  /**
   * Serves a changing set of packages: a list, or a function yielding the current list. Loads it
   * now; `refresh()` on the handle reads it again (new paths load, changed packages are read again,
   * paths that went away unload). A path that can't be loaded is left out, never thrown.
   */
  async addSource(source: ToolSource, options: LoadOptions = {}): Promise<ToolSourceHandle> {
    this.#assertOpen();
    return this.#served.add(source, (path) => this.load(path, options));
  }

  /**
   * Serves a folder of tool packages (its subfolders, links to folders, and module files) and
   * watches it: a package added, changed or removed changes the offered set after a short debounce.
   * @example const handle = await host.watch('./tools'); … await handle.close();
   */
  async watch(directory: string, options: WatchOptions & LoadOptions = {}): Promise<ToolSourceHandle> {
    this.#assertOpen();
    return this.#served.watch(directory, options, (path) => this.load(path, options));
  }

  /**
   * Pins what is loaded: writes an entry (declaration and content digests) for every module read
   * and offered, or withheld only by the lock, into a lock file, keeping the other entries. When it
   * is the host's own `lockFile`, what was pinned is offered at once.
   * @example await host.load('./tools/weather'); const { changes } = await host.pin({ lockFile: 'toolhost.lock.json' });
   */
  async pin(options: PinOptions = {}): Promise<PinReport> {
    this.#assertOpen();
    expectLockFile('lockFile', options.lockFile);
    return pinLoaded(this.#registry, options.lockFile ?? this.#settings.lockFile ?? DEFAULT_LOCK_FILE_NAME);
  }

  /** Registers one of the host's own tools (trusted, in-process). It wins a name clash with loaded tools. */
  register(tool: HostTool): void {
    this.#assertOpen();
    const offered = offeredHostTool(
      tool,
      (name) => this.#registry.hasHostTool(name),
      this.#settings.schemaLimits,
    );
    this.#registry.publish({ type: 'host-tool', name: tool.name, tool: offered });
  }

  /** Removes one of the host's own tools; a loaded tool of that name may be offered again. */
  unregister(name: string): boolean {
    if (!this.#registry.hasHostTool(name)) return false;
    this.#registry.publish({ type: 'host-tool', name, tool: undefined });
    return true;
  }

  /** The offered tools' checked declarations (one generation: never a mix of two versions). */
  list(): ToolInfo[] {
    return [...this.#registry.generation.tools.values()].map((tool) => ({ ...tool.info }));
  }

  /**
   * Every known module: offered, left out (and why), or waiting for a re-read (and when), and the
   * isolation tier its package runs in.
   */
  status(): ModuleStatus[] {
    return this.#registry.generation.statuses.map((status) => this.#networkCounts.withCounts(status));
  }

  /** The `tools` param of the Messages API for the offered tools. */
  toAnthropicTools(): Tool[] {
    return [...this.#registry.generation.tools.values()].map(({ info }) => anthropicTool(info));
  }

  /**
   * The offered tools as `BetaRunnableTool`s for the SDK's own runner
   * (`client.beta.messages.toolRunner({ tools })`); calls still run in this host's sandbox.
   */
  toRunnableTools(): BetaRunnableTool<unknown>[] {
    return toRunnableTools(this);
  }

  /**
   * Calls an offered tool. Never rejects for a tool's fault: the outcome says what happened. The
   * tool is the one offered at the moment of the call, and the call runs that version to the end.
   * @example const outcome = await host.call('weather', { city: 'Berlin' });
   */
  async call(name: string, args: unknown, options: CallOptions = {}): Promise<ToolOutcome> {
    // A caller's mistake, not a tool's fault: it rejects, as a bad selftest timeout does.
    expectPositiveInteger('timeoutMs', options.timeoutMs);
    expectFunction('onOutput', options.onOutput);
    if (this.#closed) return errorOutcome('HOST_CLOSED', 'the tool host is closed');
    const target = callTarget(this.#registry.generation.tools, name, args);
    if ('refused' in target) return target.refused;
    return this.#invoke(target.tool, 'run', args, options);
  }

  /**
   * Runs each tool's selftest (all offered tools, or those named) in a worker with a fresh tmpDir.
   * Each runs the version offered when it starts.
   */
  async selftest(names?: readonly string[], options: SelftestOptions = {}): Promise<SelftestReport[]> {
    this.#assertOpen();
    expectPositiveInteger('timeoutMs', options.timeoutMs);
    const callOptions: CallOptions = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
    return runSelftests(names ?? [...this.#registry.generation.tools.keys()], {
      concurrency: this.#settings.maxConcurrentSelftests,
      // Looked up as each one starts: a package updated meanwhile runs its new version's selftest.
      lookup: (name) => this.#registry.generation.tools.get(name),
      run: (tool) => this.#invoke(tool, 'selftest', undefined, callOptions),
    });
  }

  /**
   * Ends every worker, read, watcher and timer at once; calls still pending answer `HOST_CLOSED`.
   * It does not wait for reads or refreshes in flight: they end with the workers.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#unwatchLock();
    this.#registry.close();
    this.#served.stop();
    await Promise.all([this.#reader.close(), this.#pools.close(), this.#snapshots.close(), this.#swept]);
    await rm(this.#settings.tmpRoot, { recursive: true, force: true, maxRetries: 2 });
    releaseTempRoot(this.#settings.tmpRoot);
  }

  #invoke(
    tool: OfferedTool,
    kind: 'run' | 'selftest',
    args: unknown,
    options: CallOptions,
  ): Promise<ToolOutcome> {
    const sequence = ++this.#callSequence;
    const { origin } = tool;
    return invokeTool(tool, {
      kind,
      args,
      options,
      sequence,
      settings: this.#settings,
      // Chosen now, in the tick the tool was looked up in: the pool of that tool's own version.
      pool: origin.kind === 'module' ? this.#pools.poolFor(origin.record.source) : undefined,
      inProcess: { settings: this.#pools.inProcessSettings(), closing: this.#closing.signal },
      emit: this,
    });
  }

  #workers(event: WorkerBudgetEvent): void {
    try {
      this.emit('workers', event);
    } catch (error) {
      // A listener's throw must not reach the budget in the middle of giving turns.
      this.#settings.logger.error(`a workers listener threw: ${String(error)}`);
    }
  }

  #fault(source: string, message: string): void {
    const safe = escapeControl(truncate(this.#settings.redactor.text(message)));
    this.#settings.logger.warn(`${source}: ${safe}`);
    this.emit('fault', { source, message: safe });
  }

  #assertOpen(): void {
    if (this.#closed) throw new ToolHostError('HOST_CLOSED', 'The tool host is closed');
  }
}
