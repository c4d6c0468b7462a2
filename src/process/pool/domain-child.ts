/**
 * One package process, as the host holds it: started (inside bubblewrap where it can be) with null
 * stdin and stdout, an empty environment and one channel (descriptor 3); held to its memory limit
 * (memory-bound.ts) before it is told what to do; every frame it sends parsed (child-notes.ts); and
 * ended as a whole (its process group, its cgroup, its pid namespace). How it ended is worked out
 * once (child-end.ts), after the process is gone and its channel is drained, so a reply sent just
 * before a crash still counts. Its stderr is read by the host and never shown: the last of it tells
 * a process that ran out of heap (V8 says so there, then aborts) from one that crashed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { ChildInit, HostMessage } from '../../boundary/child-protocol.js';
import type { ReplyLimits } from '../../boundary/parse-call-reply.js';
import { type ChildNote, ChildNoteReader } from '../channel/child-notes.js';
import { encodeFrame } from '../channel/frames.js';
import { type EgressDoor, routedInit } from '../network/egress.js';
import { MemoryBound } from '../sandbox/memory-bound.js';
import { holdUntilExit, killGroup, letGo } from '../sandbox/process-group.js';
import type { ChildEnvironment } from '../sandbox/process-tier.js';
import { childCommand, type SandboxPaths } from '../sandbox/sandbox.js';
import { type ChildEnd, childEndOf } from './child-end.js';
import { StderrTail } from './stderr-tail.js';

export interface ChildOptions {
  /** What it is told to do; a function when that depends on what this machine gives (the sandbox). */
  init: ChildInit | ((environment: ChildEnvironment) => ChildInit);
  paths: SandboxPaths;
  /** Node's flags for it (after its sandbox's arguments, before its entry point). */
  nodeFlags: string[] | ((environment: ChildEnvironment) => string[]);
  memoryMb: number;
  /** Its heap limit (`--max-old-space-size`), named when it runs out. */
  heapMb?: number;
  replyLimits: ReplyLimits;
  /** What this machine gives it (found once; every process waits for that). */
  environment: () => Promise<ChildEnvironment>;
  /** A package held to a list of hosts: its proxy, opened before a sandboxed process starts. */
  egress?: { open(): Promise<EgressDoor>; hasSecrets: boolean } | undefined;
  onReady(): void;
  onNote(note: ChildNote): void;
  onEnd(end: ChildEnd): void;
}

/** How long a process may take from its start to being ready for work. */
const START_BOUND_MS = 30_000;
/** After the process is gone, how long its channel may stay open (a detached grandchild holding it). */
const DRAIN_BOUND_MS = 1000;

export class DomainChild {
  readonly #options: ChildOptions;
  #child: ChildProcess | undefined;
  #socket: Socket | undefined;
  #stderr: StderrTail | undefined;
  /** Its cgroup or its watchdog, once made (before it starts). */
  #memory: MemoryBound | undefined;
  #greeted = false;
  #ready = false;
  #killed: ChildEnd | undefined;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #ended = false;
  #busy = false;
  #startTimer: NodeJS.Timeout | undefined;
  /** What it is told to do, known once the environment is (routed through its proxy, if it has one). */
  #init: ChildInit | undefined;

  constructor(options: ChildOptions) {
    this.#options = options;
    // Whatever fails while it starts (a spawn that throws, a logger that throws) ends it as a start.
    this.#start().catch((error: unknown) =>
      this.kill({ cause: 'start', message: `could not start: ${String(error)}` }),
    );
  }

  get ready(): boolean {
    return this.#ready && !this.ending;
  }

  /** Being ended, exited or ended: nothing new may be sent to it. */
  get ending(): boolean {
    return this.#killed !== undefined || this.#exit !== undefined || this.#ended;
  }

  send(message: HostMessage): void {
    try {
      this.#socket?.write(encodeFrame(message));
    } catch {
      // The channel is gone; the end is on its way.
    }
  }

  /** A process running calls keeps the host alive and is watched closely; an idle one neither. */
  set busy(busy: boolean) {
    this.#busy = busy;
    if (this.#memory !== undefined) this.#memory.busy = busy;
    for (const handle of [this.#child, this.#socket, this.#stderr?.stream]) {
      if (busy) handle?.ref();
      else handle?.unref();
    }
  }

  /** Ends the process and everything in it; `end` is what its running calls answer. */
  kill(end: ChildEnd): void {
    this.#killed ??= end;
    clearTimeout(this.#startTimer);
    this.#memory?.endAll();
    // Not started (still being prepared, or its spawn failed): there is no exit to wait for.
    if (this.#child?.pid === undefined) this.#finish();
    // Exited: its group was ended then, and its pid may name another process by now.
    else if (this.#exit === undefined) killGroup(this.#child);
  }

  async #start(): Promise<void> {
    const options = this.#options;
    this.#startTimer = setTimeout(
      () => this.kill({ cause: 'start', message: `did not start within ${START_BOUND_MS / 1000} s` }),
      START_BOUND_MS,
    );
    this.#startTimer.unref();
    const environment = await options.environment();
    const { sandbox, cgroups } = environment;
    if (this.#killed !== undefined) return;
    this.#init = typeof options.init === 'function' ? options.init(environment) : options.init;
    let paths = options.paths;
    // Only a sandbox holds a package to its proxy: without one, its network is the tier's (docs/isolation.md).
    // A package with secrets uses its proxy everywhere: the value is only ever there.
    if (options.egress !== undefined && (sandbox.available || options.egress.hasSecrets)) {
      const door = await options.egress.open();
      paths = { ...paths, egress: door.folder };
      this.#init = routedInit(this.#init, door);
      if (this.#killed !== undefined) return;
    }
    try {
      mkdirSync(options.paths.tmpDir, { recursive: true });
      const memory = await MemoryBound.create(cgroups, options.memoryMb);
      // Ended while it was being made: #finish has run without it, so it goes here.
      if (this.#killed !== undefined) {
        memory.release();
        return;
      }
      this.#memory = memory;
      memory.busy = this.#busy;
    } catch (error) {
      this.kill({ cause: 'start', message: `could not be prepared: ${String(error)}` });
      return;
    }
    if (this.#killed !== undefined) return;
    const nodeFlags =
      typeof options.nodeFlags === 'function' ? options.nodeFlags(environment) : options.nodeFlags;
    const [command, args] = childCommand(paths, sandbox, {
      nodeFlags,
      mode: this.#init.mode,
    });
    const child = spawn(command, args, {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env: {},
      // Its tmp folder (in a sandbox, whose root is read-only, that holds only until bwrap moves it to
      // the root): never the host's working directory, which Node 22 and later grant the workers a
      // process runs under the permission model (its declaration readers), and where a process
      // that aborts (V8 out of heap) would leave its core dump.
      cwd: options.paths.tmpDir,
      // A group of its own: ending it ends what a tool started beside it.
      detached: true,
    });
    this.#child = child;
    child.once('error', (error) =>
      this.kill({ cause: 'start', message: `could not start: ${error.message}` }),
    );
    if (child.pid === undefined) return;
    child.once('exit', (code, signal) => this.#exited(code, signal));
    holdUntilExit(child);
    this.#stderr = new StderrTail(child.stdio[2] as Socket);
    this.#stderr.stream.once('close', () => {
      if (this.#exit !== undefined) this.#finishOnceDrained();
    });
    this.#listen(child.stdio[3] as Socket);
    this.busy = this.#busy;
    // In its cgroup at once; what it starts before its hello (bwrap's own processes) follows then.
    await this.#memory?.placeStarted(child.pid);
  }

  #listen(socket: Socket): void {
    this.#socket = socket;
    const notes = new ChildNoteReader(this.#options.replyLimits);
    socket.on('data', (chunk: Buffer) => {
      const result = notes.push(chunk, (note) => {
        if (this.#killed === undefined) this.#receive(note);
        return this.#killed === undefined;
      });
      if (!result.ok) this.kill({ cause: 'protocol', message: result.reason });
    });
    socket.on('error', () => {});
    socket.once('close', () => {
      if (this.#exit !== undefined) {
        this.#finishOnceDrained();
        return;
      }
      // A process that died closes its channel a moment before its exit is seen: wait for that. One
      // that closed its channel and lives on is ended.
      setTimeout(() => {
        if (this.#exit === undefined)
          this.kill({ cause: 'crashed', message: 'closed its channel to the host' });
      }, DRAIN_BOUND_MS);
    });
  }

  #receive(note: ChildNote): void {
    if (this.#ended) return;
    if (note.type === 'hello') {
      if (!this.#greeted) void this.#greet();
      return;
    }
    if (note.type === 'ready') {
      if (this.#greeted && !this.#ready) {
        this.#ready = true;
        clearTimeout(this.#startTimer);
        this.#options.onReady();
      }
      return;
    }
    // Nothing but the handshake before the process is ready; a fault then (no package code has run
    // in it yet) means it could not get ready.
    if (this.#ready) this.#options.onNote(note);
    else if (note.type === 'fault' && this.#greeted)
      this.kill({ cause: 'start', message: `could not start: ${note.message}` });
  }

  /** Its hello came before any tool code can run: it is placed and watched, then told what to do. */
  async #greet(): Promise<void> {
    this.#greeted = true;
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    try {
      await this.#memory?.hold(pid, (message) => this.kill({ cause: 'memory', message }));
    } catch (error) {
      this.kill({ cause: 'start', message: `could not be put in its memory cgroup: ${String(error)}` });
      return;
    }
    if (this.#killed === undefined && this.#init !== undefined) this.send(this.#init);
  }

  #exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.#exit = { code, signal };
    clearTimeout(this.#startTimer);
    if (this.#child !== undefined) {
      letGo(this.#child);
      // What a tool left behind (a background job holding the channel open) goes with it.
      killGroup(this.#child);
    }
    this.#memory?.endAll();
    if (this.#finishOnceDrained()) return;
    setTimeout(() => {
      this.#socket?.destroy();
      this.#stderr?.stream.destroy();
    }, DRAIN_BOUND_MS).unref();
  }

  /** Finishes once the process is gone and its channel and stderr are read to their end. */
  #finishOnceDrained(): boolean {
    const drained = [this.#socket, this.#stderr?.stream].every(
      (stream) => stream === undefined || stream.closed,
    );
    if (drained) this.#finish();
    return drained;
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    const end = childEndOf({
      oomKilled: this.#memory?.oomKilled === true,
      ranOutOfHeap: this.#stderr?.ranOutOfHeap === true,
      killed: this.#killed,
      exit: this.#exit,
      memoryMb: this.#options.memoryMb,
      heapMb: this.#options.heapMb,
    });
    this.#memory?.release();
    try {
      this.#options.onEnd(end);
    } catch {
      // The owner's handler is total; a throw here must not reach the host's event loop.
    }
  }
}
