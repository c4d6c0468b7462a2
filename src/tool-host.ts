/**
 * ToolHost: reads tool modules' declarations safely, offers what checks out, and runs every call in
 * a pooled worker of the tool's trust domain with time and memory bounds. A tool's fault is an error
 * outcome; only the host's own misuse throws.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { checkDeclaration, checkTimeoutMs, TOOL_NAME_PATTERN, type ToolInfo } from './declaration.js';
import { DeclarationReader, type ReadOutcome } from './declaration-reader.js';
import { expectPositiveInteger, ToolHostError } from './errors.js';
import type {
  LoadReport,
  ModuleEvent,
  SelftestReport,
  ToolHostEvents,
  ToolOutputEvent,
} from './host-events.js';
import {
  type CallOptions,
  expectTier,
  type LoadOptions,
  type Logger,
  resolveSettings,
  type SelftestOptions,
  type Settings,
  type ToolHostOptions,
} from './host-options.js';
import { runInProcess } from './in-process-tool.js';
import { findEscapingSymlink, type IsolationTier } from './isolation.js';
import { compileParameterSchema, validateInput } from './json-schema.js';
import { toRunnableTools } from './loop/runnable-tools.js';
import { errorOutcome, outcomeText, successOutcome, type ToolOutcome } from './outcome.js';
import type { CallSettings, CallTask } from './protocol.js';
import {
  buildGeneration,
  type Generation,
  type HostTool,
  type ModuleRecord,
  type ModuleStatus,
  type OfferedTool,
} from './registry.js';
import { RereadSchedule } from './reread-schedule.js';
import { escapeControl, sanitizingLogger, truncate } from './sanitize.js';
import {
  listDirectory,
  listFromSource,
  ServedSource,
  type SourceHost,
  type ToolSource,
  type ToolSourceHandle,
  type WatchOptions,
  watchDirectory,
} from './sources.js';
import type { JsonValue } from './tool-module.js';
import { moduleUrl, moduleVersion, resolveSource } from './tool-source.js';
import { type DomainManifest, NO_MANIFEST, WorkerFlags } from './worker-flags.js';
import { TrustDomainPool } from './worker-pool.js';

export class ToolHost extends EventEmitter<ToolHostEvents> {
  readonly #settings: Settings;
  readonly #logger: Logger;
  readonly #reader: DeclarationReader;
  readonly #hostTools = new Map<string, OfferedTool>();
  readonly #records = new Map<string, ModuleRecord>();
  /** Per loaded source: its module paths (so loading it again drops what it no longer lists), tier and manifest. */
  readonly #sources = new Map<
    string,
    { modules: string[]; isolation: IsolationTier; manifest: DomainManifest }
  >();
  /** The real root each path given to `load` resolved to, so `unload` finds it by either. */
  readonly #rootByPath = new Map<string, string>();
  readonly #problems = new Map<string, { path: string; reason: string }>();
  readonly #served = new Set<ServedSource>();
  readonly #draining = new Set<TrustDomainPool>();
  /** `flags`: what the pool's workers were started with besides the versions (see WorkerFlags.key). */
  readonly #pools = new Map<string, { version: string; flags: string; pool: TrustDomainPool }>();
  readonly #workerFlags: WorkerFlags;
  readonly #logged = new Set<string>();
  /** What the host's own tools' calls share (made on the first such call). */
  #inProcessSettings: CallSettings | undefined;
  /** Each trust domain's tmp folder (under `tmpRoot`), by domain. */
  readonly #tmpDirs = new Map<string, string>();
  /** Load order per module path, kept while the path stays known. */
  readonly #orderOf = new Map<string, number>();
  #generation: Generation = { number: 0, tools: new Map(), statuses: [], domainVersions: new Map() };
  #order = 0;
  #callSequence = 0;
  #closed = false;
  /** Aborts when the host closes: in-process calls still running answer `HOST_CLOSED`. */
  readonly #closing = new AbortController();

  constructor(options: ToolHostOptions = {}) {
    super();
    this.#settings = resolveSettings(options);
    // Worker-provided text (fault messages, left-out reasons, tool printing) reaches the logger as data.
    this.#logger = sanitizingLogger(this.#settings.logger);
    this.#workerFlags = new WorkerFlags({ ...this.#settings, logger: this.#logger });
    this.#reader = new DeclarationReader(
      {
        heapMb: this.#settings.readHeapMb,
        timeoutMs: this.#settings.readTimeoutMs,
        schema: this.#settings.schemaLimits,
        schemaCompileBudgetMs: this.#settings.schemaCompileBudgetMs,
      },
      this.#settings.cores,
    );
  }

  /**
   * Loads a tool package (a folder whose package.json lists `toolhost.tools`) or one module file.
   * Each module's declaration is read in a throwaway worker, once per version of its file.
   * Rejects only for a caller's mistake (a missing path, a folder that is not a tool package).
   */
  async load(path: string, options: LoadOptions = {}): Promise<LoadReport> {
    this.#assertOpen();
    if (options.isolation !== undefined) expectTier('isolation', options.isolation);
    const source = await resolveSource(path);
    this.#rootByPath.set(resolve(path), source.root);
    const listed = source.modules.map((module) => module.path);
    for (const previous of this.#sources.get(source.root)?.modules ?? []) {
      if (!listed.includes(previous)) this.#dropRecord(previous);
    }
    const isolation = options.isolation ?? this.#settings.isolation;
    const manifest = { packageName: source.packageName, permissions: source.permissions };
    this.#sources.set(source.root, { modules: listed, isolation, manifest });
    // Load order decides name clashes: hand it out in listed order, before any read finishes.
    for (const path of listed) if (!this.#orderOf.has(path)) this.#orderOf.set(path, ++this.#order);

    // Node's permission model follows symbolic links: a strict package must hold none that leads out.
    const escapingLink =
      isolation === 'strict' && source.kind === 'package'
        ? await findEscapingSymlink(source.root)
        : undefined;

    await Promise.all(
      source.modules.map(async (module) => {
        if (!module.ok) {
          this.#setRecord(module.path, source.root, source.packageName, 'missing', {
            kind: 'failed',
            code: module.code,
            reason: module.reason,
          });
          return;
        }
        if (escapingLink !== undefined) {
          this.#setRecord(module.path, source.root, source.packageName, 'missing', {
            kind: 'failed',
            code: 'MODULE_OUTSIDE_PACKAGE',
            reason: `strict isolation can't confine this package: ${escapingLink.link} is a symbolic link to ${escapingLink.target}, outside the package (Node's permission model follows symbolic links)`,
          });
          return;
        }
        const version = await moduleVersion(module.path);
        if (version === undefined) {
          this.#setRecord(module.path, source.root, source.packageName, 'missing', {
            kind: 'failed',
            code: 'MODULE_NOT_FOUND',
            reason: `the module ${module.path} could not be read`,
          });
          return;
        }
        const known = this.#records.get(module.path);
        if (known !== undefined && known.version === version && known.read.kind !== 'reading') return;
        const record = this.#setRecord(module.path, source.root, source.packageName, version, {
          kind: 'reading',
        });
        this.#applyRead(record, await this.#read(record));
      }),
    );
    // A host closed meanwhile reports what the reads found, but offers nothing any more.
    const generation = this.#closed ? this.#nextGeneration() : this.#rebuild();
    const modules = generation.statuses.filter((status) => status.source === source.root);
    return { source: source.root, kind: source.kind, modules };
  }

  /**
   * Unloads a package or module loaded with {@link load}: its tools are no longer offered, its
   * re-reads stop, and its workers end once their running calls have answered.
   * @returns whether anything was loaded from that path
   */
  unload(path: string): boolean {
    const root = this.#rootOf(path);
    const hadProblem = this.#problems.delete(root) || this.#problems.delete(resolve(path));
    const source = this.#sources.get(root);
    if (source === undefined) {
      if (hadProblem) this.#rebuild();
      return hadProblem;
    }
    for (const module of source.modules) this.#dropRecord(module);
    this.#sources.delete(root);
    for (const [alias, target] of this.#rootByPath) if (target === root) this.#rootByPath.delete(alias);
    this.#rebuild();
    return true;
  }

  /**
   * Serves a changing set of packages: a list, or a function yielding the current list. Loads it
   * now; `refresh()` on the handle reads it again (new paths load, changed modules are read again,
   * paths that went away unload). A path that can't be loaded is left out, never thrown.
   */
  async addSource(source: ToolSource, options: LoadOptions = {}): Promise<ToolSourceHandle> {
    this.#assertOpen();
    const served = this.#serve(listFromSource(source), options, () => {});
    await served.refresh();
    return served;
  }

  /**
   * Serves a folder of tool packages (its subfolders and module files) and watches it: a package
   * added, changed or removed changes the offered set after a short debounce.
   * @example const handle = await host.watch('./tools'); … await handle.close();
   */
  async watch(directory: string, options: WatchOptions & LoadOptions = {}): Promise<ToolSourceHandle> {
    this.#assertOpen();
    expectPositiveInteger('debounceMs', options.debounceMs);
    expectPositiveInteger('stableMs', options.stableMs);
    const root = resolve(directory);
    await resolveSource(root).catch((error: unknown) => {
      // A folder of packages has no package.json itself; only a missing folder is a mistake here.
      if (error instanceof ToolHostError && error.code === 'PATH_NOT_FOUND') throw error;
    });
    let stop = () => {};
    const served = this.#serve(listDirectory(root, options.stableMs ?? 100), options, () => stop());
    await served.refresh();
    stop = watchDirectory(root, options.debounceMs ?? 250, () => {
      served.refresh().catch((error: unknown) => this.#fault(root, `refreshing failed: ${String(error)}`));
    });
    return served;
  }

  #serve(list: () => Promise<Iterable<string>>, options: LoadOptions, onClose: () => void): ServedSource {
    const host: SourceHost = {
      loadPath: async (path) => {
        try {
          await this.load(path, options);
          if (this.#problems.delete(path)) this.#rebuild();
          return { ok: true };
        } catch (error) {
          if (!(error instanceof ToolHostError) || this.#closed) throw error;
          this.unload(path);
          this.#problems.set(path, { path, reason: error.message });
          this.#rebuild();
          return { ok: false, reason: error.message };
        }
      },
      unloadPath: (path) => {
        if (!this.#closed) this.unload(path);
      },
    };
    const served = new ServedSource(list, host, () => {
      this.#served.delete(served);
      onClose();
    });
    this.#served.add(served);
    return served;
  }

  #rootOf(path: string): string {
    const absolute = resolve(path);
    const known = this.#rootByPath.get(absolute);
    if (known !== undefined) return known;
    try {
      return realpathSync(absolute);
    } catch {
      return absolute;
    }
  }

  /** Registers one of the host's own tools (trusted, in-process). It wins a name clash with loaded tools. */
  register(tool: HostTool): void {
    this.#assertOpen();
    if (typeof tool !== 'object' || tool === null) {
      throw new ToolHostError(
        'INVALID_OPTION',
        'Expected a tool object with name, description, parameterSchema and run',
      );
    }
    if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
      throw new ToolHostError(
        'INVALID_OPTION',
        `Expected \`name\` to match ${TOOL_NAME_PATTERN.source}, got ${JSON.stringify(tool.name)}`,
      );
    }
    if (typeof tool.description !== 'string') {
      throw new ToolHostError(
        'INVALID_OPTION',
        `Expected \`description\` of tool "${tool.name}" to be a string`,
      );
    }
    if (typeof tool.run !== 'function') {
      throw new ToolHostError('INVALID_OPTION', `Expected \`run\` of tool "${tool.name}" to be a function`);
    }
    if (this.#hostTools.has(tool.name)) {
      throw new ToolHostError('NAME_TAKEN', `A host tool named "${tool.name}" is already registered`);
    }
    const compiled = compileParameterSchema(tool.parameterSchema, this.#settings.schemaLimits);
    if (!compiled.ok) throw new ToolHostError('INVALID_OPTION', `Tool "${tool.name}": ${compiled.message}`);
    this.#hostTools.set(tool.name, {
      info: {
        name: tool.name,
        description: tool.description,
        parameterSchema: tool.parameterSchema,
        timeoutMs: checkTimeoutMs(tool.timeoutMs),
        concurrency: tool.concurrency === 'exclusive' ? 'exclusive' : 'parallel',
      },
      validate: compiled.validate,
      hasSelftest: typeof tool.selftest === 'function',
      origin: { kind: 'host', tool },
    });
    this.#rebuild();
  }

  /** Removes one of the host's own tools; a loaded tool of that name may be offered again. */
  unregister(name: string): boolean {
    const removed = this.#hostTools.delete(name);
    if (removed) this.#rebuild();
    return removed;
  }

  /** The offered tools' checked declarations. */
  list(): ToolInfo[] {
    return [...this.#generation.tools.values()].map((tool) => ({ ...tool.info }));
  }

  /** Every known module: offered, left out (and why), or waiting for a re-read (and when). */
  status(): ModuleStatus[] {
    return this.#generation.statuses.map((status) => ({ ...status }));
  }

  /** The `tools` param of the Messages API for the offered tools. */
  toAnthropicTools(): Tool[] {
    return [...this.#generation.tools.values()].map(({ info }) => ({
      name: info.name,
      description: info.description,
      input_schema: { ...info.parameterSchema, type: 'object' },
    }));
  }

  /**
   * The offered tools as `BetaRunnableTool`s for the SDK's own runner
   * (`client.beta.messages.toolRunner({ tools })`); calls still run in this host's sandbox.
   */
  toRunnableTools(): BetaRunnableTool<unknown>[] {
    return toRunnableTools(this);
  }

  /**
   * Calls an offered tool. Never rejects for a tool's fault: the outcome says what happened.
   * @example const outcome = await host.call('weather', { city: 'Berlin' });
   */
  async call(name: string, args: unknown, options: CallOptions = {}): Promise<ToolOutcome> {
    if (this.#closed) return errorOutcome('HOST_CLOSED', 'the tool host is closed');
    const tool = typeof name === 'string' ? this.#generation.tools.get(name) : undefined;
    if (tool === undefined) {
      const names = [...this.#generation.tools.keys()];
      return errorOutcome(
        'UNKNOWN_TOOL',
        `unknown tool ${JSON.stringify(String(name))}; available tools: ${names.length === 0 ? '(none)' : names.join(', ')}`,
      );
    }
    const check = validateInput(tool.validate, args);
    if (!check.valid) {
      return errorOutcome(
        'INVALID_INPUT',
        `the input does not match the tool's parameterSchema:\n${check.errors.map((line) => `- ${line}`).join('\n')}`,
      );
    }
    return this.#invoke(tool, 'run', args, options);
  }

  /** Runs each tool's selftest (all offered tools, or those named) in a worker with a fresh tmpDir. */
  async selftest(names?: readonly string[], options: SelftestOptions = {}): Promise<SelftestReport[]> {
    this.#assertOpen();
    expectPositiveInteger('timeoutMs', options.timeoutMs);
    const callOptions: CallOptions = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
    const tools =
      names === undefined
        ? [...this.#generation.tools.values()]
        : names.map((name) => this.#generation.tools.get(name));
    const reports: SelftestReport[] = new Array(tools.length);
    let next = 0;
    const worker = async () => {
      while (next < tools.length) {
        const index = next++;
        const tool = tools[index];
        const name = tool?.info.name ?? names?.[index] ?? '';
        if (tool === undefined) {
          reports[index] = {
            name,
            status: 'failed',
            durationMs: 0,
            error: { code: 'UNKNOWN_TOOL', message: `unknown tool "${name}"` },
          };
        } else if (!tool.hasSelftest) {
          reports[index] = { name, status: 'no-selftest', durationMs: 0 };
        } else {
          const started = performance.now();
          const outcome = await this.#invoke(tool, 'selftest', undefined, callOptions);
          const durationMs = Math.round(performance.now() - started);
          reports[index] = outcome.isError
            ? {
                name,
                status: 'failed',
                durationMs,
                error: outcome.error ?? { code: 'TOOL_ERROR_RESULT', message: outcomeText(outcome) },
              }
            : { name, status: 'passed', durationMs };
        }
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.#settings.selftestConcurrency, tools.length) }, worker),
    );
    return reports;
  }

  /** Ends every worker, read and timer. Calls still pending answer `HOST_CLOSED`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    await Promise.all([...this.#served].map((served) => served.close()));
    for (const record of this.#records.values()) {
      if (record.read.kind === 'timed-out') record.read.schedule?.cancel();
    }
    await Promise.all([
      this.#reader.close(),
      ...[...this.#pools.values()].map(({ pool }) => pool.close()),
      ...[...this.#draining].map((pool) => pool.close()),
    ]);
    this.#pools.clear();
    await rm(this.#settings.tmpRoot, { recursive: true, force: true, maxRetries: 2 });
  }

  async #invoke(
    tool: OfferedTool,
    kind: 'run' | 'selftest',
    args: unknown,
    options: CallOptions,
  ): Promise<ToolOutcome> {
    const sequence = ++this.#callSequence;
    const callId = options.callId ?? `call_${sequence}`;
    // A caller's cap that is not a positive number is no cap; the tool's own timeout always holds.
    const cap = options.timeoutMs;
    const timeoutMs =
      typeof cap === 'number' && cap >= 1
        ? Math.min(tool.info.timeoutMs, Math.floor(cap))
        : tool.info.timeoutMs;
    const task: CallTask = {
      kind,
      taskId: String(sequence),
      callId,
      sessionId: options.sessionId ?? 'default',
      moduleUrl: tool.origin.kind === 'module' ? tool.origin.record.url : '',
      args,
      withheld: options.withheld ?? [],
      timeoutMs,
    };
    const onProgress = (data: JsonValue) => this.emit('progress', { toolName: tool.info.name, callId, data });

    let reply: Awaited<ReturnType<TrustDomainPool['run']>>;
    if (tool.origin.kind === 'host') {
      reply = await runInProcess(tool.origin.tool, task, {
        settings: this.#inProcessCallSettings(),
        signal: options.signal,
        closing: this.#closing.signal,
        onProgress,
      });
    } else {
      reply = await this.#poolFor(tool.origin.record).run(task, { signal: options.signal, onProgress });
    }

    if (reply.logs.length > 0 || reply.droppedLogBytes > 0) {
      const event: ToolOutputEvent = {
        toolName: tool.info.name,
        callId,
        logs: reply.logs,
        droppedBytes: reply.droppedLogBytes,
      };
      if (this.listenerCount('output') > 0) this.emit('output', event);
      else this.#logger.info(`tool ${tool.info.name} printed: ${reply.logs.map((log) => log.text).join('')}`);
    }
    if (!reply.ok) return errorOutcome(reply.error.code, reply.error.message);
    return successOutcome(reply, {
      outputBudgetBytes: this.#settings.outputBudgetBytes,
      dataDir: this.#settings.dataDir,
      artifactName: `${tool.info.name}-${Date.now()}-${sequence}`,
    });
  }

  #poolFor(record: ModuleRecord): TrustDomainPool {
    // Workers of a domain hold the module versions they imported; a domain whose modules changed
    // gets a new pool (see #rebuild), so no call that starts after a change runs old code.
    const version = this.#generation.domainVersions.get(record.domain) ?? record.version;
    const flags = this.#flagsOf(record.domain);
    const current = this.#pools.get(record.domain);
    if (current !== undefined && current.version === version && current.flags === flags) return current.pool;
    if (current !== undefined) this.#drain(current.pool);
    const pool = new TrustDomainPool(
      {
        maxThreads: this.#settings.maxThreadsPerPool,
        idleTimeoutMs: this.#settings.idleTimeoutMs,
        heapMb: this.#settings.callHeapMb,
        stackMb: this.#settings.callStackMb,
        timeoutGraceMs: this.#settings.timeoutGraceMs,
        env: this.#settings.env,
        execArgv: this.#execArgvFor(record.domain),
        allowAddons: this.#settings.allowAddons,
        call: this.#callSettings(record.domain),
      },
      (message) => this.#fault(record.domain, message),
    );
    this.#pools.set(record.domain, { version, flags, pool });
    return pool;
  }

  /** An old pool ends once its running calls have answered, or at `close()`, whichever is first. */
  #drain(pool: TrustDomainPool): void {
    this.#draining.add(pool);
    pool
      .drain()
      .catch((error: unknown) => this.#fault('a drained pool', `it failed to end: ${String(error)}`))
      .finally(() => this.#draining.delete(pool));
  }

  #read(record: ModuleRecord): Promise<ReadOutcome> {
    return this.#reader.read(record.url, this.#execArgvFor(record.domain));
  }

  #tierOf(domain: string): IsolationTier {
    return this.#sources.get(domain)?.isolation ?? this.#settings.isolation;
  }

  #flagsOf(domain: string): string {
    return this.#workerFlags.key(this.#tierOf(domain), this.#sources.get(domain)?.manifest ?? NO_MANIFEST);
  }

  #execArgvFor(domain: string): string[] {
    return this.#workerFlags.execArgv(
      this.#tierOf(domain),
      { domain, tmpDir: this.#domainTmpDir(domain) },
      this.#sources.get(domain)?.manifest ?? NO_MANIFEST,
    );
  }

  /** Each domain's calls get their tmpDirs under one folder of its own (what a strict tier may write). */
  #domainTmpDir(domain: string): string {
    let path = this.#tmpDirs.get(domain);
    if (path === undefined) {
      const slug = domain === '' ? 'host' : createHash('sha256').update(domain).digest('hex').slice(0, 12);
      path = join(this.#settings.tmpRoot, slug);
      this.#tmpDirs.set(domain, path);
    }
    return path;
  }

  #inProcessCallSettings(): CallSettings {
    this.#inProcessSettings ??= this.#callSettings('');
    return this.#inProcessSettings;
  }

  #callSettings(domain: string): CallSettings {
    return {
      dataDir: this.#settings.dataDir,
      tmpDir: this.#domainTmpDir(domain),
      maxResultBytes: this.#settings.maxResultBytes,
      maxLogBytes: this.#settings.maxLogBytes,
    };
  }

  #fault(source: string, message: string): void {
    const safe = escapeControl(truncate(message));
    this.#logger.warn(`${source}: ${safe}`);
    this.emit('fault', { source, message: safe });
  }

  #setRecord(
    path: string,
    domain: string,
    packageName: string | undefined,
    version: string,
    read: ModuleRecord['read'],
  ): ModuleRecord {
    const previous = this.#records.get(path);
    if (previous !== undefined) this.#retire(previous);
    const record: ModuleRecord = {
      path,
      domain,
      packageName,
      order: this.#orderOf.get(path) ?? ++this.#order,
      version,
      url: moduleUrl(path, version),
      read,
    };
    this.#records.set(path, record);
    return record;
  }

  #dropRecord(path: string): void {
    const record = this.#records.get(path);
    if (record === undefined) return;
    this.#retire(record);
    this.#records.delete(path);
    this.#orderOf.delete(path);
  }

  /** Lets go of what a module version held: its re-read schedule. */
  #retire(record: ModuleRecord): void {
    if (record.read.kind === 'timed-out') record.read.schedule?.cancel();
  }

  #applyRead(record: ModuleRecord, outcome: ReadOutcome): void {
    if (this.#records.get(record.path) !== record) return;
    if (outcome.state === 'read') {
      const checked = checkDeclaration(outcome.declaration, this.#settings.schemaLimits);
      record.read = checked.ok
        ? { kind: 'read', info: checked.info, validate: checked.validate, hasSelftest: checked.hasSelftest }
        : { kind: 'failed', code: checked.code, reason: checked.reason };
    } else if (outcome.state === 'failed') {
      record.read = { kind: 'failed', code: outcome.code, reason: outcome.reason };
    } else {
      record.read = { kind: 'timed-out', reason: outcome.reason, schedule: undefined };
      if (!this.#closed && this.#settings.rereadDelaysMs.length > 0) {
        const read = record.read;
        read.schedule = new RereadSchedule(this.#settings.rereadDelaysMs, this.#settings.clock, {
          onScheduled: () => this.#rebuild(),
          read: async () => {
            if (this.#records.get(record.path) !== record || this.#closed) return false;
            const again = await this.#read(record);
            if (again.state === 'timed-out') return true;
            this.#applyRead(record, again);
            this.#rebuild();
            return false;
          },
          onGiveUp: () => {
            read.schedule = undefined;
            this.#rebuild();
          },
        });
      }
    }
  }

  /** Builds the next generation and reports what changed: events, and a log line per new left-out reason. */
  #nextGeneration(): Generation {
    return buildGeneration(
      this.#generation.number + 1,
      this.#hostTools,
      this.#records.values(),
      this.#problems.values(),
    );
  }

  #rebuild(): Generation {
    if (this.#closed) return this.#generation;
    const previous = new Map(this.#generation.statuses.map((status) => [status.path, status]));
    this.#generation = this.#nextGeneration();
    // Pools of an old version take no new calls; they end once their running calls have answered.
    for (const [domain, entry] of this.#pools) {
      if (
        this.#generation.domainVersions.get(domain) !== entry.version ||
        this.#flagsOf(domain) !== entry.flags
      ) {
        this.#pools.delete(domain);
        this.#drain(entry.pool);
      }
    }
    for (const status of this.#generation.statuses) {
      const before = previous.get(status.path);
      previous.delete(status.path);
      if (status.state === 'reading') continue;
      if (
        before !== undefined &&
        before.state === status.state &&
        before.reason === status.reason &&
        before.nextRereadAt === status.nextRereadAt &&
        before.name === status.name &&
        before.version === status.version
      ) {
        continue;
      }
      if (status.state === 'left-out' || status.state === 'reread-pending') {
        const key = `${status.path}\u0000${this.#records.get(status.path)?.version}\u0000${status.code}\u0000${status.reason}`;
        if (!this.#logged.has(key)) {
          this.#logged.add(key);
          const suffix = status.state === 'reread-pending' ? '; it will be read again later' : '';
          this.#logger.warn(`left out ${status.path}: ${status.reason}${suffix}`);
        }
      }
      const wasRereading = before?.state === 'reread-pending' && before.nextRereadAt !== undefined;
      const type: ModuleEvent['type'] =
        status.state === 'reread-pending' && status.nextRereadAt !== undefined
          ? 'reread-scheduled'
          : wasRereading
            ? 'reread-result'
            : status.state === 'offered'
              ? 'offered'
              : 'left-out';
      this.emit('module', { type, status: { ...status } });
    }
    for (const removed of previous.values()) this.emit('module', { type: 'removed', status: { ...removed } });
    return this.#generation;
  }

  #assertOpen(): void {
    if (this.#closed) throw new ToolHostError('HOST_CLOSED', 'The tool host is closed');
  }
}
