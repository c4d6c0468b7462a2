/**
 * The calls a process-tier pool has sent to its package's processes, on the host: each is sent once
 * the package's egress proxy (if it has one) charges it, hears what its process says of it (progress,
 * output, its reply: parsed notes, see child-notes.ts), must be given back within the grace once
 * the host has answered it itself (timed out), and answers for the process when the process is gone.
 * A process holds one call at a time, until it gives it back.
 */
import { rm } from 'node:fs/promises';
import { type CallSettings, callTmpDir, FAULT_CODES } from '../../boundary/protocol.js';
import { failure, type PoolReply } from '../../calls/answer-once.js';
import type { ChildNote } from '../channel/child-notes.js';
import type { PackageEgress } from '../network/egress.js';
import type { ChildEnd } from './child-end.js';
import type { Live } from './pool-process.js';
import type { ProcessCall } from './process-call.js';

/** Fault reports kept per process: a process that floods them is heard this many times. */
const MAX_FAULTS = 100;

export interface SentCallsOptions {
  /** A package held to hosts: its proxy charges each call's bytes from when it is sent. */
  egress: PackageEgress | undefined;
  onFault: (message: string) => void;
  timeoutGraceMs: number;
  /** The pool's call settings (a spare's process has a tmp folder of its own, see `Live.tmpDir`). */
  call: CallSettings;
  /** A process gave its call back: it is free. */
  onGivenBack: (live: Live) => void;
}

/** What the call a process held answers when it ends: the cause its end gives. */
export function answerFor(end: ChildEnd): PoolReply {
  // Out of heap, as a worker's tool would be: the heap is the tool's own.
  if (end.cause === 'heap') return failure('TOOL_OUT_OF_MEMORY', `the tool ${end.message}`);
  const code = end.cause === 'memory' ? 'TOOL_OUT_OF_MEMORY' : 'TOOL_CRASHED';
  return failure(code, `the tool's process ${end.message}`);
}

export class SentCalls {
  readonly #options: SentCallsOptions;

  constructor(options: SentCallsOptions) {
    this.#options = options;
  }

  /** Sends `call` to `live`, which holds it from now until it gives it back (or is gone). */
  send(live: Live, call: ProcessCall): void {
    live.holding = call;
    const send = () => {
      live.child.send({ type: 'run', task: call.task });
      call.sent();
    };
    const egress = this.#options.egress;
    if (egress === undefined) {
      send();
      return;
    }
    void egress.begin(call.task.taskId).then(() => {
      // The process ended meanwhile (and answered the call), or the call was answered unsent.
      if (live.holding !== call) return;
      if (call.answered) {
        this.#givenBack(live);
        return;
      }
      send();
    });
  }

  /** What the process said: a fault (counted), or a note of the call it holds. */
  note(live: Live, note: ChildNote): void {
    if (note.type === 'fault') {
      live.faults += 1;
      if (live.faults <= MAX_FAULTS) this.#options.onFault(note.message);
      // A fault while it holds no call (a tool's leftover timer threw): the process exits after it,
      // and takes no call meanwhile. (An honest process reports a running call's fault as its reply.)
      if (live.holding === undefined) live.child.kill({ cause: 'ended', message: 'ended after a fault' });
      return;
    }
    if (note.type === 'hello' || note.type === 'ready' || note.type === 'read') return;
    const call = live.holding;
    if (call === undefined || call.task.taskId !== note.taskId) {
      // An honest process speaks only of the call it runs: one that names another was taken over,
      // and is not heard again (a frame it may send costs the host its parse: once).
      live.child.kill({
        cause: 'protocol',
        message: 'broke the protocol: it sent a message for a call it does not hold',
      });
      return;
    }
    if (note.type === 'progress') {
      call.progress(note.data);
      return;
    }
    if (note.type === 'log') {
      call.logs(note.logs);
      return;
    }
    const { reply } = note;
    live.holding = undefined;
    this.#options.egress?.end(note.taskId);
    if (!reply.ok) {
      // Its own code encodes every reply: a bad one means the process itself was taken over.
      live.child.kill({ cause: 'protocol', message: 'sent a malformed reply' });
      this.#removeTmpDir(live, call);
      call.answer(failure('TOOL_BAD_RESULT', `the tool's process sent a malformed reply: ${reply.reason}`));
      return;
    }
    if (!reply.value.ok && FAULT_CODES.has(reply.value.error.code)) {
      // A fault's reply (an exit, an uncaught exception): the process exits after it, without
      // removing the call's tmpDir, and takes no other call meanwhile.
      live.child.kill({ cause: 'ended', message: 'ended after a fault' });
      this.#removeTmpDir(live, call);
    } else {
      // Free before the call is answered, so that whatever its answer sets going can take it.
      this.#options.onGivenBack(live);
    }
    // A call the host answered itself (timed out) keeps that answer: its reply only frees the process.
    call.answer(reply.value);
  }

  /**
   * The host answered (timed out) the call `live` holds: its tool had `ctx.signal` aborted at the
   * same moment, and the process is ended unless it gives the call back within the grace, as a
   * worker would be.
   */
  awaitRelease(live: Live, call: ProcessCall): void {
    if (live.holding !== call) return;
    setTimeout(() => {
      if (live.holding === call) live.child.kill({ cause: 'crashed', message: 'did not end a call in time' });
    }, this.#options.timeoutGraceMs).unref();
  }

  /** `live` is gone: the call it held answers for it, and its tmp folder is removed here. */
  lost(live: Live, end: ChildEnd): void {
    const call = live.holding;
    if (call === undefined) return;
    live.holding = undefined;
    this.#options.egress?.end(call.task.taskId);
    call.answer(answerFor(end));
    this.#removeTmpDir(live, call);
  }

  /** Removes a call's tmpDir on the host: its process ended (or is ending) without doing it. */
  #removeTmpDir(live: Live, call: ProcessCall): void {
    const settings = { ...this.#options.call, tmpDir: live.tmpDir };
    void rm(callTmpDir(settings, call.task), { recursive: true, force: true }).catch(() => {});
  }

  /** The process gave its call back: it is free, and the call's bytes are counted no more. */
  #givenBack(live: Live): void {
    const call = live.holding;
    live.holding = undefined;
    if (call !== undefined) this.#options.egress?.end(call.task.taskId);
    this.#options.onGivenBack(live);
  }
}
