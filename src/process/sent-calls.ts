/**
 * The calls a process-tier pool has sent to its package's process, on the host: each is sent once
 * the package's egress proxy (if it has one) charges it, hears what the process says of it (started,
 * progress, output, its reply: parsed notes, see child-messages.ts), must be given back in time once
 * the host has answered it itself, and answers for the process when the process is gone. A call the
 * process holds is a thread of the process taken, until the process gives it back.
 */
import { rm } from 'node:fs/promises';
import { type CallSettings, callTmpDir } from '../boundary/protocol.js';
import { failure, type PoolReply } from '../calls/answer-once.js';
import type { ChildNote } from './child-messages.js';
import type { ChildEnd } from './domain-child.js';
import type { PackageEgress } from './network/egress.js';
import type { Live } from './pool-process.js';
import type { ProcessCall } from './process-call.js';

/** How long a process may take to give back a call the host has answered (timed out, aborted). */
const RELEASE_BOUND_MS = 10_000;
/** Fault reports kept per process: a process that floods them is heard this many times. */
const MAX_FAULTS = 100;

export interface SentCallsOptions {
  /** A package held to hosts: its proxy charges each call's bytes from when it is sent. */
  egress: PackageEgress | undefined;
  onFault: (message: string) => void;
  timeoutGraceMs: number;
  /** The pool's call settings (a spare's process has a tmp folder of its own, see `Live.tmpDir`). */
  call: CallSettings;
  /** A process gave a call back: one of its threads is free. */
  onGivenBack: () => void;
}

/** What the calls a process held answer when it ends: the cause its end gives. */
export function answerFor(end: ChildEnd): PoolReply {
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
    live.holding.set(call.task.taskId, call);
    const send = () => {
      live.child.send({ type: 'run', task: call.task });
      call.sent(() => live.child.kill({ cause: 'crashed', message: 'did not start a call it was sent' }));
    };
    const egress = this.#options.egress;
    if (egress === undefined) {
      send();
      return;
    }
    const { taskId } = call.task;
    void egress.begin(taskId).then(() => {
      // The process ended meanwhile (and answered the call), or the call was answered unsent.
      if (live.holding.get(taskId) !== call) return;
      if (call.answered) {
        this.#givenBack(live, taskId);
        return;
      }
      send();
    });
  }

  /** What the process said: a fault (counted), or a note of a call it holds. */
  note(live: Live, note: ChildNote): void {
    if (note.type === 'fault') {
      live.faults += 1;
      if (live.faults <= MAX_FAULTS) this.#options.onFault(note.message);
      return;
    }
    if (note.type === 'hello' || note.type === 'ready' || note.type === 'read') return;
    const call = live.holding.get(note.taskId);
    if (call === undefined) return;
    if (note.type === 'started') {
      call.started();
    } else if (note.type === 'progress') {
      call.progress(note.data);
    } else if (note.type === 'log') {
      call.logs(note.logs);
    } else if (call.answered) {
      // A call the host answered itself (timed out, aborted): its reply only gives its thread back.
      this.#givenBack(live, note.taskId);
    } else if (!note.reply.ok) {
      const reason = note.reply.reason;
      call.answer(failure('TOOL_BAD_RESULT', `the tool's process sent a malformed reply: ${reason}`));
      // Its pool parsed its workers' replies: a bad one means the process itself was taken over.
      live.child.kill({ cause: 'protocol', message: 'sent a malformed reply' });
    } else {
      live.holding.delete(note.taskId);
      this.#options.egress?.end(note.taskId);
      call.answer(note.reply.value);
      this.#options.onGivenBack();
    }
  }

  /** The host answered a call `live` still holds: the process must give it back in time. */
  awaitRelease(live: Live, call: ProcessCall): void {
    if (live.holding.get(call.task.taskId) !== call) return;
    const bound = this.#options.timeoutGraceMs + RELEASE_BOUND_MS;
    setTimeout(() => {
      if (live.holding.get(call.task.taskId) === call)
        live.child.kill({ cause: 'crashed', message: 'did not end a call in time' });
    }, bound).unref();
  }

  /** `live` is gone: the calls it held answer for it, and their tmp folders are removed here. */
  lost(live: Live, end: ChildEnd): void {
    const reply = answerFor(end);
    for (const taskId of live.holding.keys()) this.#options.egress?.end(taskId);
    const settings = { ...this.#options.call, tmpDir: live.tmpDir };
    for (const call of live.holding.values()) {
      call.answer(reply);
      // Its worker could not remove the call's tmpDir: the process is gone.
      void rm(callTmpDir(settings, call.task), { recursive: true, force: true }).catch(() => {});
    }
    live.holding.clear();
  }

  /** The process gave a call back: its thread is free, and its bytes are counted no more. */
  #givenBack(live: Live, taskId: string): void {
    live.holding.delete(taskId);
    this.#options.egress?.end(taskId);
    this.#options.onGivenBack();
  }
}
