/**
 * One server entry over its life: started in its sandbox, its tools read and checked, restarted
 * with backoff when it ends (left out once it keeps dying), read again on the host's re-read
 * schedule when its first read ran over its time bound, its tools read again when it says they
 * changed (at most once a second, relist-limiter.ts), and its calls relayed (server-calls.ts).
 * `onChange` hears every change of what it offers; the server set publishes it.
 */
import type { LeftOutCode } from '../../boundary/errors.js';
import type { PoolReply } from '../../calls/answer-once.js';
import type { ServerPlace } from '../../calls/server-places.js';
import { type ServerRuns, serverRunsDigest } from '../../lock/server-runs.js';
import type { RereadView } from '../../registry/generation.js';
import { RereadSchedule } from '../../registry/reread-schedule.js';
import type { ServerEntry } from './config.js';
import { type ServerConnection, stderrWords } from './connection.js';
import { RelistLimiter } from './relist-limiter.js';
import { RestartPolicy } from './restart-policy.js';
import { type RuntimeCall, ServerCalls } from './server-calls.js';
import { serverRunsOf } from './server-files.js';
import type { ServerPlan } from './server-sandbox.js';
import { type ServerSettings, startServer } from './server-start.js';
import { type CheckedServerTool, checkServerTool } from './tool-check.js';

export type RuntimeState =
  | { kind: 'starting' }
  | {
      kind: 'ready';
      connection: ServerConnection;
      tools: CheckedServerTool[];
      plan: ServerPlan;
      /** What it runs, as a lock pins it (see {@link ServerRuntime.runs}). */
      runs: ServerRuns | undefined;
    }
  | { kind: 'restarting' }
  | { kind: 'left-out'; code: LeftOutCode; reason: string; schedule?: RereadView };

/** What a runtime reads: the servers' settings, and where it takes its place in the worker budget. */
export interface RuntimeSettings extends ServerSettings {
  /** Asks for the server's place in the host's worker budget (see calls/server-places.ts). */
  takePlace(): ServerPlace;
}

export class ServerRuntime {
  readonly entry: ServerEntry;
  readonly #settings: RuntimeSettings;
  readonly #onChange: () => void;
  #state: RuntimeState = { kind: 'starting' };
  readonly #calls: ServerCalls;
  #restarts = new RestartPolicy();
  #closed = false;
  #restartTimer: NodeJS.Timeout | undefined;
  /** The tools as last listed (JSON): a re-read that lists the same publishes nothing. */
  #listed = '';
  readonly #relists = new RelistLimiter();
  /** Re-reads after a first read that ran over its time bound. */
  #schedule: RereadSchedule | undefined;
  /**
   * Its place in the host's worker budget: taken before its first start, kept through restarts, given
   * back once it is left out or closed (and its process has ended).
   */
  #place: ServerPlace | undefined;
  /** A process is being started (startServer has not returned): it gives the place back if closed meanwhile. */
  #startingProcess = false;

  constructor(entry: ServerEntry, settings: RuntimeSettings, onChange: () => void) {
    this.entry = entry;
    this.#settings = settings;
    this.#onChange = onChange;
    this.#calls = new ServerCalls({
      serverName: entry.name,
      settings,
      state: () => this.#state,
      closed: () => this.#closed,
    });
  }

  get state(): RuntimeState {
    return this.#state;
  }

  /** Starts the server and reads its tools; never rejects (a failure leaves it out, with its reason). */
  async start(): Promise<void> {
    const first = this.#state.kind === 'starting';
    const restart = this.#state.kind === 'restarting';
    // Without bubblewrap no server runs (startServer says so at once): none waits for a place first.
    if (this.#place === undefined && this.#settings.sandbox.available) {
      const place = this.#settings.takePlace();
      this.#place = place;
      const answer = await place.answer;
      if (this.#closed) return;
      if (!answer.held) {
        this.#place = undefined;
        this.#leaveOut('SERVER_FAILED', answer.reason);
        return;
      }
    }
    this.#startingProcess = true;
    const started = await startServer(this.entry, this.#settings).finally(() => {
      this.#startingProcess = false;
    });
    if (this.#closed) {
      // close() saw no process: the place comes back once this one has ended.
      if (started.ok) {
        started.connection.close();
        await started.connection.ended;
      }
      this.#releasePlace();
      return;
    }
    if (!started.ok && restart) {
      // A restart that fails is one more death: backed off, and left out only when they add up.
      this.#died(started.reason.replace(/^it /, ''));
      return;
    }
    if (!started.ok) {
      const timedOut = started.code === 'DECLARATION_TIMEOUT';
      if (first && timedOut) this.#scheduleReads();
      this.#leaveOut(started.code, started.reason, timedOut ? this.#schedule : undefined);
      return;
    }
    const { connection, tools, plan, runs } = started;
    const listed = listedText(tools, runs);
    const changed = listed !== this.#listed;
    this.#listed = listed;
    this.#relists.listedNow();
    this.#state = { kind: 'ready', connection, tools: this.#check(tools), plan, runs };
    connection.onToolsChanged = () => this.#relists.ask(() => this.#relist(connection));
    connection.onLog = (line) => this.#calls.log(line);
    void connection.ended.then(() => this.#ended(connection));
    this.#calls.wake();
    if (changed) this.#onChange();
  }

  /**
   * The config was loaded again: a server left out for good (it kept dying, it could not start, it
   * had no place) starts again, its past ends forgotten. False (nothing done) for one that runs, is
   * being restarted, or waits for a re-read.
   */
  async retry(): Promise<boolean> {
    const state = this.#state;
    if (this.#closed || state.kind !== 'left-out' || state.schedule !== undefined) return false;
    this.#restarts = new RestartPolicy();
    this.#state = { kind: 'starting' };
    await this.start();
    return true;
  }

  /** What the running server runs, as a lock pins it (digested now when its start did not); undefined when not running. */
  async runs(): Promise<ServerRuns | undefined> {
    const state = this.#state;
    if (state.kind !== 'ready') return undefined;
    state.runs ??= await serverRunsOf(this.entry, state.plan).catch(() => undefined);
    return state.runs;
  }

  /** Relays one call; resolves with exactly one reply, whatever the server does. */
  call(toolName: string, args: unknown, call: RuntimeCall): Promise<PoolReply> {
    return this.#calls.call(toolName, args, call);
  }

  /** Waits for the calls in flight, then ends the server. */
  async drain(): Promise<void> {
    await this.#calls.settled();
    await this.close();
  }

  /** Ends the server; resolves once it and everything it started have ended. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#restartTimer);
    this.#relists.close();
    this.#schedule?.cancel();
    this.#calls.wake();
    const state = this.#state;
    if (state.kind === 'ready') {
      state.connection.close();
      await state.connection.ended;
    }
    // A process being started gives the place back once it has ended (see start).
    if (!this.#startingProcess) this.#releasePlace();
  }

  #ended(connection: ServerConnection): void {
    if (this.#closed || this.#state.kind !== 'ready' || this.#state.connection !== connection) return;
    this.#calls.ended(connection);
    this.#died(`${connection.exit?.description ?? 'ended'}${stderrWords(connection.stderrTail)}`);
  }

  /** The server ended (or a restart failed, `how`): restarted after a backoff, or left out for good. */
  #died(how: string): void {
    const next = this.#restarts.ended(Date.now());
    if ('giveUp' in next) {
      const reason = `${next.giveUp} (last: it ${how}); toolhost stopped restarting it (load the config again to retry)`;
      this.#settings.logger.warn(`MCP server ${this.entry.name}: ${reason}`);
      this.#leaveOut('SERVER_FAILED', reason);
      return;
    }
    this.#state = { kind: 'restarting' };
    this.#restartTimer = setTimeout(() => void this.start(), next.restartInMs);
    this.#restartTimer.unref();
  }

  /** A first read that ran over its time bound is tried again after each of the host's re-read delays. */
  #scheduleReads(): void {
    const { rereadDelaysMs, clock } = this.#settings;
    if (rereadDelaysMs.length === 0) return;
    this.#schedule = new RereadSchedule(rereadDelaysMs, clock, {
      onScheduled: () => this.#onChange(),
      read: async () => {
        if (this.#closed) return false;
        await this.start();
        const state = this.#state;
        return state.kind === 'left-out' && state.code === 'DECLARATION_TIMEOUT';
      },
      onGiveUp: () => {
        this.#schedule = undefined;
        const state = this.#state;
        if (state.kind === 'left-out')
          this.#state = { kind: 'left-out', code: state.code, reason: state.reason };
        this.#onChange();
      },
    });
  }

  /** `list_changed` (at the limiter's rate): the tools are read again on the same connection. */
  async #relist(connection: ServerConnection): Promise<void> {
    const bounds = { ...this.#settings.listBounds, timeoutMs: this.#settings.readTimeoutMs };
    const tools = await connection.listTools(bounds).catch(() => undefined);
    const state = this.#state;
    if (tools === undefined || this.#closed || state.kind !== 'ready' || state.connection !== connection)
      return;
    // Stringified once: what it lists now, against what was published.
    const listed = listedText(tools, state.runs);
    if (listed === this.#listed) return;
    this.#listed = listed;
    this.#state = { ...state, tools: this.#check(tools) };
    this.#onChange();
  }

  #check(tools: unknown[]): CheckedServerTool[] {
    const settings = {
      prefix: this.entry.prefix,
      timeoutMs: this.entry.timeoutMs ?? this.#settings.defaultTimeoutMs,
      schemaLimits: this.#settings.schemaLimits,
    };
    return tools.map((tool) => checkServerTool(tool, settings));
  }

  /**
   * Left out (until a re-read, with `schedule`): calls waiting for it are answered, its tools are no
   * longer offered, and its place in the worker budget is given back.
   */
  #leaveOut(code: LeftOutCode, reason: string, schedule?: RereadSchedule): void {
    // Published here, but for a first start (its load publishes it) and a re-read still over its
    // time bound (its schedule does).
    const shown = this.#state.kind !== 'starting' && schedule === undefined;
    this.#state = { kind: 'left-out', code, reason };
    // The schedule outlives versions: a version retired cancels nothing of it.
    if (schedule !== undefined)
      this.#state.schedule = {
        get nextAt() {
          return schedule.nextAt;
        },
        cancel: () => {},
      };
    this.#releasePlace();
    this.#calls.wake();
    this.#listed = '';
    if (shown) this.#onChange();
  }

  #releasePlace(): void {
    this.#place?.release();
    this.#place = undefined;
  }
}

/**
 * The tools as listed and what the server runs, as one text: a re-read or a restart that gives the
 * same text publishes nothing (what it runs is part of what is published: a restart into other code
 * is judged again).
 */
function listedText(tools: unknown[], runs: ServerRuns | undefined): string {
  return `${JSON.stringify(tools)}\0${runs === undefined ? '' : serverRunsDigest(runs)}`;
}
