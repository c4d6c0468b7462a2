/**
 * The entry point of a package's process (the process tier). It talks to the host over descriptor 3
 * only (length-prefixed frames, see frames.ts) and runs, for one package version, the same pool of
 * worker threads the host runs in the worker tier, or throwaway declaration readers. Nothing here
 * runs tool code: tools run in the worker threads, with the worker tier's lockdown and hardening.
 * The host trusts none of what this process sends (a tool can take it over); this code only keeps
 * an honest process honest.
 */
import { Socket } from 'node:net';
import type { TrackedWorker } from '../calls/thread-reaper.js';
import { TrustDomainPool } from '../calls/worker-pool.js';
import { readInWorker } from '../declaration/read-worker.js';
import { closeInheritedDescriptors } from './child-fds.js';
import type { ChildMessage, HostMessage } from './child-messages.js';
import { encodeFrame, FrameReader } from './frames.js';

// Before anything else: descriptors the host's own parents left open are not for tools.
closeInheritedDescriptors(new Set([0, 1, 2, 3]));

/** What the host may send in one frame: a call's arguments are the model's input. */
const MAX_HOST_FRAME_BYTES = 256 * 1024 * 1024;

const channel = new Socket({ fd: 3, readable: true, writable: true });
const frames = new FrameReader(MAX_HOST_FRAME_BYTES);
const exit = process.exit.bind(process);

function send(message: ChildMessage): void {
  try {
    channel.write(encodeFrame(message));
  } catch {
    // The channel is gone: the host has ended this process, or is about to.
  }
}

let pool: TrustDomainPool | undefined;
let reads: { heapMb: number; timeoutMs: number } | undefined;
const readers = new Set<TrackedWorker>();
const running = new Map<string, AbortController>();

function handle(message: HostMessage): void {
  switch (message.type) {
    case 'init':
      if (message.mode === 'calls') {
        pool = new TrustDomainPool(message.limits, (fault) => send({ type: 'fault', message: fault }));
      } else {
        reads = { heapMb: message.heapMb, timeoutMs: message.timeoutMs };
      }
      send({ type: 'ready' });
      return;
    case 'run':
      run(message.task);
      return;
    case 'cancel':
      running.get(message.taskId)?.abort();
      return;
    case 'read':
      read(message.readId, message.moduleUrl, message.execArgv);
      return;
  }
}

function run(task: Extract<HostMessage, { type: 'run' }>['task']): void {
  if (pool === undefined) return;
  const { taskId } = task;
  const controller = new AbortController();
  running.set(taskId, controller);
  pool
    .run(task, {
      signal: controller.signal,
      onStarted: () => send({ type: 'started', taskId }),
      onProgress: (data) => send({ type: 'progress', taskId, data }),
      onLogs: (logs) => send({ type: 'log', taskId, logs }),
    })
    .then((reply) => {
      // A cancelled call's reply too: it tells the host the call's thread is free again. The pool
      // delivered the call's progress and output before its reply, and one channel keeps them in
      // order: nothing is left to wait for.
      send({ type: 'reply', taskId, reply: { ...reply, progressSent: 0, logNotesSent: 0 } });
    })
    .catch(() => {})
    .finally(() => running.delete(taskId));
}

function read(readId: number, moduleUrl: string, execArgv: string[]): void {
  if (reads === undefined) return;
  readInWorker(moduleUrl, execArgv, { ...reads, workers: readers, closing: () => false })
    .then((outcome) => send({ type: 'read', readId, outcome }))
    .catch(() => {});
}

channel.on('data', (chunk: Buffer) => {
  const result = frames.push(chunk);
  if (!result.ok) {
    exit(70);
    return;
  }
  for (const value of result.values) {
    try {
      handle(value as HostMessage);
    } catch (error) {
      send({ type: 'fault', message: `the package's process failed to handle a message: ${String(error)}` });
    }
  }
});
// The host ended the channel (it closed, or it is gone): so does this process, its workers with it.
channel.on('end', () => exit(0));
channel.on('close', () => exit(0));
channel.on('error', () => exit(0));

send({ type: 'hello' });
