/**
 * The calls of a package's process (the process tier), run on the process's own main thread: one
 * V8 isolate per process, and one call at a time in it, as in a call worker. The host runs as many
 * such processes per package as it would run workers, sends each one call at a time, and ends the
 * process where it would end a worker (a timeout past its grace, a caller's abort). The process's
 * line to the host is its channel (src/process/child/child-main.ts); what would cross a worker's port
 * crosses it as frames instead, and a fault that ends the process is its call's reply, written
 * before the process exits. Tool code shares this thread with that line and can write to it, so the
 * host parses every frame as untrusted, exactly as it parses a worker's messages.
 */

import type { ProcessCallsOptions, StartProcessCalls } from '../../src/boundary/child-protocol.js';
import type { CallReply, CallTask, WorkerMessage } from '../../src/boundary/protocol.js';
import { lockdownMainThread } from '../guard/lockdown.js';
import { activeCall } from './active-call.js';
import { callRunner, prepareForTools } from './call-runner.js';
import { inTurn } from './queue.js';

const apply = Reflect.apply;
const then = Promise.prototype.then;

/** Readies the process for tools; returns what runs a task the host sends (one at a time). */
export const startProcessCalls: StartProcessCalls = async (options: ProcessCallsOptions) => {
  const { send } = options;
  // The process started with an empty environment: the package's variables are set before any of
  // its code runs, as a worker's `env` is.
  for (const key of Object.keys(process.env)) delete process.env[key];
  for (const [key, value] of Object.entries(options.env)) process.env[key] = String(value);

  const post = (message: WorkerMessage): void => {
    switch (message.type) {
      case 'progress':
        send({ type: 'progress', taskId: message.taskId, data: message.data });
        return;
      case 'log':
        send({ type: 'log', taskId: message.taskId, logs: message.logs });
        return;
      case 'fault': {
        // A fault ends this process (the fault handler exits next). For a running call it is that
        // call's answer, as the host would make it of a worker's report and its end.
        const { taskId, error, logs } = message;
        if (taskId === null) {
          send({ type: 'fault', message: `${error.code}: ${error.message}` });
          return;
        }
        const droppedLogChars = activeCall()?.droppedLogChars ?? 0;
        send({
          type: 'reply',
          taskId,
          reply: { ok: false, error, logs, droppedLogChars, progressSent: 0, logNotesSent: 0 },
        });
        return;
      }
      case 'hello':
        return;
    }
  };
  // Node makes the stdio streams on first use (sockets and files on descriptors 0 to 2): made now,
  // before the descriptor guard refuses a stream on a descriptor no tool opened.
  for (const stream of [process.stdin, process.stdout, process.stderr]) void stream;
  const settings = await prepareForTools(options.settings, post, options.exit);
  // One channel keeps the order: progress and output sent before a reply are on the host before it.
  const runTask = callRunner({ settings, post, seal: (reply) => reply });
  lockdownMainThread();

  // The host sends one call at a time; one that comes early waits its turn rather than interleave
  // (as in a worker, see queue.ts). A `then` taken now: a tool can replace Promise's methods.
  const answer = (task: CallTask, reply: CallReply | null): void => {
    if (reply !== null)
      send({ type: 'reply', taskId: task.taskId, reply: { ...reply, progressSent: 0, logNotesSent: 0 } });
  };
  return (task: CallTask) => {
    if (task.kind === 'wake') return;
    apply(
      then,
      inTurn(task, () => runTask(task)),
      [(reply: CallReply | null) => answer(task, reply), () => {}],
    );
  };
};
