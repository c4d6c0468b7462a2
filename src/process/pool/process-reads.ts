/**
 * Declaration reads of a process-tier package version: in a throwaway process of the package's own,
 * with the same sandbox and memory limit its calls get, started on the first read and ended once the
 * version has been read. Each module is still read in a throwaway worker there; the host bounds the
 * read's time on its own clock and parses what comes back (child-notes.ts). A module that takes
 * the process over while it is read touches only that process, never the one its calls will run in.
 */

import type { ReplyLimits } from '../../boundary/parse-call-reply.js';
import type { ReadOutcome } from '../../boundary/protocol.js';
import { CLOSED_OUTCOME } from '../../declaration/read-worker.js';
import type { ChildEnvironment } from '../sandbox/process-tier.js';
import type { SandboxPaths } from '../sandbox/sandbox.js';
import type { ChildEnd } from './child-end.js';
import { DomainChild } from './domain-child.js';

export interface ProcessReadsOptions {
  paths: SandboxPaths;
  memoryMb: number;
  heapMb: number;
  timeoutMs: number;
  /** The flags of the reader workers (the worker tier's, inside the sandbox). */
  execArgv: string[];
  /** Their flags where there is no sandbox (strict's: see process-domains.ts; default: `execArgv`). */
  unsandboxedExecArgv?: string[];
  /** Whether its tools may load native addons, in bubblewrap and without it. */
  allowAddons: { sandboxed: boolean; unsandboxed: boolean };
  environment: () => Promise<ChildEnvironment>;
}

interface PendingRead {
  moduleUrl: string;
  resolve(outcome: ReadOutcome): void;
  timer?: NodeJS.Timeout;
}

/** A read reply is five declaration fields of at most 1 MiB each (MAX_FIELD_BYTES), as JSON. */
const READ_REPLY_LIMITS: ReplyLimits = { maxResultBytes: 8 * 1024 * 1024, maxLogChars: 0 };

function outcomeFor(end: ChildEnd, memoryMb: number): ReadOutcome {
  if (end.cause === 'ended') return CLOSED_OUTCOME;
  if (end.cause === 'memory') {
    return {
      state: 'failed',
      code: 'DECLARATION_OUT_OF_MEMORY',
      reason: `reading the declaration ran out of memory (the package's process limit, ${memoryMb} MB)`,
    };
  }
  return {
    state: 'failed',
    code: 'DECLARATION_CRASHED',
    reason: `reading the declaration crashed: the package's process ${end.message}`,
  };
}

export class ProcessReads {
  readonly #options: ProcessReadsOptions;
  readonly #waiting: PendingRead[] = [];
  readonly #pending = new WeakMap<DomainChild, Map<number, PendingRead>>();
  #child: DomainChild | undefined;
  #ids = 0;
  #closed = false;
  /** Whether the reads' processes run in the sandbox (known once the first one is being started). */
  #sandboxed = true;

  constructor(options: ProcessReadsOptions) {
    this.#options = options;
  }

  /** Reads one module in the version's read process (a {@link RawRead} for the host's reader). */
  readonly read = (moduleUrl: string): Promise<ReadOutcome> => {
    if (this.#closed) return Promise.resolve(CLOSED_OUTCOME);
    return new Promise((resolve) => {
      this.#waiting.push({ moduleUrl, resolve });
      // One being ended (a read took it down) answers what it holds; the next read gets a new one.
      if (this.#child?.ending === true) this.#child = undefined;
      this.#child ??= this.#spawn();
      this.#child.busy = true;
      if (this.#child.ready) this.#sendWaiting();
    });
  };

  /** Ends the process; reads still pending answer as cut short by the host. */
  close(): void {
    this.#closed = true;
    this.#child?.kill({ cause: 'ended', message: 'was ended by the host' });
  }

  #spawn(): DomainChild {
    const { paths, memoryMb, heapMb, timeoutMs, allowAddons, environment } = this.#options;
    /** The reads sent to this process (each process answers only its own). */
    const pending = new Map<number, PendingRead>();
    const child: DomainChild = new DomainChild({
      init: { type: 'init', mode: 'reads', heapMb, timeoutMs },
      // Its readers are workers, with their own flags (`execArgv`) and heap bound.
      nodeFlags: ({ sandbox }) =>
        (sandbox.available ? allowAddons.sandboxed : allowAddons.unsandboxed) ? [] : ['--no-addons'],
      paths,
      memoryMb,
      replyLimits: READ_REPLY_LIMITS,
      environment: () =>
        environment().then((found) => {
          this.#sandboxed = found.sandbox.available;
          return found;
        }),
      onReady: () => this.#sendWaiting(),
      onNote: (note) => {
        if (note.type !== 'read') return;
        const read = pending.get(note.readId);
        pending.delete(note.readId);
        if (read === undefined) return;
        clearTimeout(read.timer);
        read.resolve(note.outcome);
      },
      onEnd: (end) => {
        const outcome = outcomeFor(end, memoryMb);
        const current = this.#child === child;
        if (current) this.#child = undefined;
        // Reads still waiting for this process (it never became ready) end with it.
        const waited = current ? this.#waiting.splice(0) : [];
        for (const read of [...waited, ...pending.values()]) {
          clearTimeout(read.timer);
          read.resolve(outcome);
        }
        pending.clear();
      },
    });
    this.#pending.set(child, pending);
    return child;
  }

  #sendWaiting(): void {
    const child = this.#child;
    const pending = child === undefined ? undefined : this.#pending.get(child);
    if (child === undefined || pending === undefined || !child.ready) return;
    for (const read of this.#waiting.splice(0)) {
      const readId = ++this.#ids;
      pending.set(readId, read);
      // The time bound is the host's, from when the process was asked (it starts the worker then).
      read.timer = setTimeout(() => {
        pending.delete(readId);
        read.resolve({
          state: 'timed-out',
          reason: `reading the declaration took longer than ${this.#options.timeoutMs} ms`,
        });
      }, this.#options.timeoutMs);
      const { execArgv, unsandboxedExecArgv } = this.#options;
      child.send({
        type: 'read',
        readId,
        moduleUrl: read.moduleUrl,
        execArgv: this.#sandboxed ? execArgv : (unsandboxedExecArgv ?? execArgv),
      });
    }
  }
}
