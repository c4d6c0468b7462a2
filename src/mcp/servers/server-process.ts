/**
 * One MCP server's process, in bubblewrap: started with an environment of the entry's `env`, the
 * `allowEnv` names and nothing else of the host's, HOME and TMPDIR in its own tmp folder, no host
 * descriptors but its stdio, in a memory cgroup (with a pids limit where the host can set one)
 * before it runs anything, and ended as a whole: bubblewrap is the init of the server's pid
 * namespace, so killing it ends every process the server started.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { StderrTail } from '../../process/pool/stderr-tail.js';
import { type CgroupSupport, ChildCgroup } from '../../process/sandbox/memory-cgroup.js';
import { PidsCgroup } from '../../process/sandbox/pids-cgroup.js';
import { describeExit, holdUntilExit, killGroup, letGo } from '../../process/sandbox/process-group.js';
import { RssWatchdog } from '../../process/sandbox/rss-watchdog.js';
import { type SandboxSupport, sandboxArgs } from '../../process/sandbox/sandbox.js';
import type { ServerPlan } from './server-sandbox.js';

/** How a server's process ended. */
export interface ServerExit {
  /** `exited with code 1`, `was killed (SIGKILL)`. */
  description: string;
  /** The kernel (or the watchdog) ended it for going over its memory limit. */
  outOfMemory: boolean;
}

export interface ServerProcessOptions {
  plan: ServerPlan;
  sandbox: SandboxSupport & { available: true };
  cgroups: CgroupSupport;
  /** Its tmp folder (made here): HOME and TMPDIR, read-write. */
  tmpDir: string;
  /** Its whole environment. */
  env: Record<string, string>;
  memoryMb: number;
  /** The most processes and threads it may run at once. */
  maxPids: number;
}

/** How long the host waits for a server's stderr to be read to its end once it has exited. */
const STDERR_DRAIN_MS = 1000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts `sh` first, held on a pipe until it is in its cgroups, then has it become bubblewrap:
 * everything the server starts is born inside the limits.
 */
const HOLD_UNTIL_PLACED = 'read _ <&3; exec 3<&-; exec "$@"';

export class ServerProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly #child: ChildProcess;
  readonly #stderr: StderrTail;
  readonly #cgroup: ChildCgroup | undefined;
  readonly #pids: PidsCgroup | undefined;
  readonly #watchdog: RssWatchdog | undefined;
  #overWatchdog = false;
  /** Resolves once, when the process has ended. */
  readonly exited: Promise<ServerExit>;

  private constructor(
    child: ChildProcess,
    limits: { cgroup: ChildCgroup | undefined; pids: PidsCgroup | undefined; memoryMb: number },
  ) {
    this.#child = child;
    this.#cgroup = limits.cgroup;
    this.#pids = limits.pids;
    this.stdin = child.stdin as Writable;
    this.stdout = child.stdout as Readable;
    this.#stderr = new StderrTail(child.stderr as Socket);
    holdUntilExit(child);
    const stderrClosed = new Promise<void>((resolve) => this.#stderr.stream.once('close', resolve));
    this.exited = new Promise<ServerExit>((resolve) => {
      let ended = false;
      const done = async (code: number | null, signal: NodeJS.Signals | null) => {
        if (ended) return;
        ended = true;
        // Whoever awaits this end (close() in a CLI run) keeps the process alive until it is over:
        // the cgroup's own retries wait on timers that don't.
        const keepAlive = setInterval(() => {}, 1000);
        letGo(child);
        this.#watchdog?.stop();
        const outOfMemory = this.#overWatchdog || this.#cgroup?.oomKilled() === true;
        // Its last words: what it wrote to stderr before it ended (bounded: a process it left
        // behind could hold the pipe open until the cgroup is emptied).
        await Promise.race([stderrClosed, delay(STDERR_DRAIN_MS)]);
        // Ended means ended: nothing it started still runs once this resolves.
        await this.#cgroup?.killAll();
        await this.#cgroup?.remove();
        await this.#pids?.remove();
        clearInterval(keepAlive);
        resolve({ description: describeExit(code, signal), outOfMemory });
      };
      child.once('exit', (code, signal) => void done(code, signal));
      child.once('error', () => void done(null, null));
    });
    if (this.#cgroup === undefined && child.pid !== undefined) {
      this.#watchdog = new RssWatchdog(child.pid, limits.memoryMb * 1024 * 1024, () => {
        this.#overWatchdog = true;
        this.kill();
      });
    }
  }

  /** The last of what the server wrote to stderr, for error text. */
  get stderrTail(): string {
    return this.#stderr.text;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Starts the server; rejects when its limits can't be made or the process can't start. */
  static async start(options: ServerProcessOptions): Promise<ServerProcess> {
    const { plan, sandbox, cgroups, tmpDir } = options;
    mkdirSync(tmpDir, { recursive: true });
    const cgroup = cgroups.available
      ? await ChildCgroup.create(cgroups.parent, cgroups.version, options.memoryMb)
      : undefined;
    const pids = await PidsCgroup.create(cgroup, options.maxPids).catch(() => undefined);
    const bwrap = [
      sandbox.bwrap,
      ...sandboxArgs({ ...plan.paths, tmpDir, workingDirectory: tmpDir }, sandbox),
      plan.command,
      ...plan.args,
    ];
    const held = cgroup !== undefined || pids !== undefined;
    const [command, args] = held
      ? ['/bin/sh', ['-c', HOLD_UNTIL_PLACED, 'sh', ...bwrap]]
      : [bwrap[0] as string, bwrap.slice(1)];
    const child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe', held ? 'pipe' : 'ignore'],
      env: options.env,
      cwd: tmpDir,
      detached: true,
    });
    const server = new ServerProcess(child, { cgroup, pids, memoryMb: options.memoryMb });
    if (child.pid === undefined) {
      const exit = await server.exited;
      throw new Error(`bubblewrap could not start: ${exit.description}`);
    }
    if (held) {
      const release = child.stdio[3] as Writable;
      release.on('error', () => {});
      try {
        await cgroup?.place([child.pid]);
        await pids?.place([child.pid]);
      } catch (error) {
        server.kill();
        throw new Error(`its process could not be put under its limits: ${String(error)}`);
      }
      release.end('\n');
    }
    return server;
  }

  /** Ends the server and everything it started. */
  kill(): void {
    killGroup(this.#child);
    void this.#cgroup?.killAll();
  }
}
