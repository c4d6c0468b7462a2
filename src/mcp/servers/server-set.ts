/**
 * The running servers of one loaded config: one {@link ServerRuntime} per entry, each its own trust
 * domain (its own process, sandbox and restarts). As a {@link CallPool} it is where the config's
 * tools are called: a tool's record names its server and the tool's name on that server. It builds
 * the registry's view of itself ({@link versionOf}): one record per listed tool, and one per server
 * that is left out, with its reason.
 */

import type { CallTask } from '../../boundary/protocol.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';
import type { ServerPlaces } from '../../calls/server-places.js';
import type { PoolCallHooks } from '../../calls/worker-pool.js';
import type { ServerRuns } from '../../lock/server-runs.js';
import type { ModuleRecord, ServerPool, SourceVersion } from '../../registry/generation.js';
import { NO_PERMISSIONS } from '../../sources/resolve-path.js';
import type { ConfiguredServer } from './config.js';
import { ServerRuntime } from './server-runtime.js';
import type { ServerSettings } from './server-start.js';

const URL_PREFIX = 'mcp-server:';

export class ServerSet implements ServerPool {
  /** The config file's real path: the source's root. */
  readonly root: string;
  /** What the config said, resolved: a load of an unchanged config keeps these servers. */
  readonly fingerprint: string;
  readonly #configured: ConfiguredServer[];
  readonly #runtimes: Array<ServerRuntime | undefined>;
  #closed = false;
  /** Hears every change of what the servers offer after the first read. */
  onChange: (() => void) | undefined;

  /** `places`: the host's worker budget, where each of these servers holds a place while it runs. */
  constructor(root: string, configured: ConfiguredServer[], settings: ServerSettings, places: ServerPlaces) {
    this.root = root;
    this.#configured = configured;
    this.fingerprint = JSON.stringify(configured);
    this.#runtimes = configured.map((server) => {
      if (!server.ok) return undefined;
      // Named as its status is: its `workers` events say which server took or gave back a place.
      const takePlace = () => places.take(`${root}#${server.entry.name}`);
      return new ServerRuntime(server.entry, { ...settings, takePlace }, () => this.#changed());
    });
  }

  /** Starts every server and reads its tools; resolves when each has been read or left out. */
  async start(): Promise<void> {
    await Promise.all(this.#runtimes.map((runtime) => runtime?.start()));
  }

  /**
   * The config was loaded again unchanged: its servers left out for good start again (see
   * {@link ServerRuntime.retry}); resolves with whether any did, once each has been read or left out.
   */
  async retry(): Promise<boolean> {
    const retried = await Promise.all(this.#runtimes.map((runtime) => runtime?.retry() ?? false));
    return retried.includes(true);
  }

  /** Process ids of the servers running now (for tests and `status`). */
  pids(): number[] {
    return this.#runtimes.flatMap((runtime) => {
      const state = runtime?.state;
      const pid = state?.kind === 'ready' ? state.connection.pid : undefined;
      return pid === undefined ? [] : [pid];
    });
  }

  /** Each configured server's path (`<config>#<name>`), in the config's order. */
  get entryPaths(): string[] {
    return this.#configured.map((server) => `${this.root}#${server.ok ? server.entry.name : server.name}`);
  }

  /** The registry's version of this config as the servers stand now. */
  versionOf(orderOf: (path: string) => number): SourceVersion {
    const modules: ModuleRecord[] = [];
    const version: SourceVersion = {
      root: this.root,
      kind: 'servers',
      packageName: undefined,
      permissions: NO_PERMISSIONS,
      isolation: 'process',
      snapshot: undefined,
      modules,
      servers: this,
    };
    this.#configured.forEach((server, index) => {
      const at = this.entryPaths[index] as string;
      // Every record of a server takes its entry's place in load order, whatever state it is in:
      // a server that restarts or lists again keeps its place, so a config loaded after it that
      // lists the same tool names never takes them over in between.
      const order = orderOf(at);
      const add = (path: string, url: string, read: ModuleRecord['read']) =>
        modules.push({ path, source: version, order, url, read });
      if (!server.ok) {
        add(at, '', { kind: 'failed', code: server.code, reason: server.reason });
        return;
      }
      const state = this.#runtimes[index]?.state;
      if (state === undefined || state.kind === 'starting' || state.kind === 'restarting') {
        add(at, '', { kind: 'failed', code: 'SERVER_FAILED', reason: 'it is being restarted' });
      } else if (state.kind === 'left-out' && state.schedule !== undefined) {
        add(at, '', { kind: 'timed-out', reason: state.reason, schedule: state.schedule });
      } else if (state.kind === 'left-out') {
        add(at, '', { kind: 'failed', code: state.code, reason: state.reason });
      } else {
        for (const tool of state.tools) {
          add(
            `${at}/${tool.serverName}`,
            `${URL_PREFIX}${index}:${encodeURIComponent(tool.serverName)}`,
            tool.read,
          );
        }
      }
    });
    return version;
  }

  runsOf(url: string): ServerRuns | undefined {
    const state = this.#runtimeOf(url)?.state;
    return state?.kind === 'ready' ? state.runs : undefined;
  }

  async prepareRuns(): Promise<void> {
    await Promise.all(this.#runtimes.map((runtime) => runtime?.runs()));
  }

  #runtimeOf(url: string): ServerRuntime | undefined {
    const match = /^mcp-server:(\d+):/.exec(url);
    return match === null ? undefined : this.#runtimes[Number(match[1])];
  }

  run(task: CallTask, hooks: PoolCallHooks = {}): Promise<PoolReply> {
    if (this.#closed) return Promise.resolve(failure('HOST_CLOSED', 'the tool host is closed'));
    const match = /^mcp-server:(\d+):(.*)$/s.exec(task.moduleUrl);
    const runtime = match === null ? undefined : this.#runtimes[Number(match[1])];
    if (match === null || runtime === undefined) {
      return Promise.resolve(failure('UNKNOWN_TOOL', 'this tool is no longer served'));
    }
    hooks.onStarted?.();
    const onProgress = hooks.onProgress ?? (() => {});
    return runtime.call(decodeURIComponent(match[2] as string), task.args, {
      timeoutMs: task.timeoutMs,
      onProgress: (data) => {
        try {
          onProgress(data);
        } catch {
          // A progress listener's throw loses that message, never the call.
        }
      },
      signal: hooks.signal,
    });
  }

  /** Ends every server once its calls in flight have answered. */
  async drain(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#runtimes.map((runtime) => runtime?.drain()));
  }

  /** Ends every server now; resolves once they and everything they started have ended. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#runtimes.map((runtime) => runtime?.close()));
  }

  #changed(): void {
    if (this.#closed) return;
    try {
      this.onChange?.();
    } catch {
      // The host's listener; a server's change never throws into it.
    }
  }
}
