/**
 * The entry point of a package's process (the process tier). It talks to the host over descriptor 3
 * only (length-prefixed frames, see frames.ts) and runs, for one package version, the same pool of
 * worker threads the host runs in the worker tier, or throwaway declaration readers. Nothing here
 * runs tool code: tools run in the worker threads, with the worker tier's lockdown and hardening.
 * The host trusts none of what this process sends (a tool can take it over); this code only keeps
 * an honest process honest.
 */
import { Socket } from 'node:net';
import type { KillSwitch } from '../calls/pool-call.js';
import type { TrackedWorker } from '../calls/thread-reaper.js';
import type { TrustDomainPool } from '../calls/worker-pool.js';
import type { readInWorker } from '../declaration/read-worker.js';
import { closeInheritedDescriptors } from './child-fds.js';
import type { ChildMessage, HostMessage } from './child-messages.js';
import { encodeFrame, FrameReader } from './frames.js';

// Before anything else: descriptors the host's own parents left open are not for tools.
closeInheritedDescriptors(new Set([0, 1, 2, 3]));

/**
 * What this process is for, as the host started it (its one argument): only that part of toolhost
 * is loaded, and it loads while the host places this process in its cgroup after its hello, rather
 * than before the hello (the process's start-up is most of a first call's time).
 */
const mode = process.argv[2] === 'reads' ? 'reads' : 'calls';
const calls =
  mode === 'calls'
    ? Promise.all([
        import('../calls/worker-pool.js'),
        import('../calls/pool-call.js'),
        // piscina too, which a pool loads when it is made.
        import('../calls/piscina.js').then(({ piscina }) => piscina()),
      ]).then(([{ TrustDomainPool }, { KillSwitch }]) => ({ TrustDomainPool, KillSwitch }))
    : undefined;
const readerModule = mode === 'reads' ? import('../declaration/read-worker.js') : undefined;

/**
 * How long a call's `started` waits for its reply to go with (the host counts the call's timeout from
 * `started`, so it may count from up to this much later).
 */
const STARTED_HOLD_MS = 1;

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
/**
 * Makes a call's cancel switch: a KillSwitch, as the pool's own kill switch is (on Node 20 a warm
 * round trip through this process was 40-60 µs longer with an AbortController per call, though one
 * costs about 5 µs alone: see the README's process tier).
 */
let newCancel: (() => KillSwitch) | undefined;
let reads: { heapMb: number; timeoutMs: number; readInWorker: typeof readInWorker } | undefined;
const readers = new Set<TrackedWorker>();
const running = new Map<string, KillSwitch>();

async function init(message: Extract<HostMessage, { type: 'init' }>): Promise<void> {
  // Told to be what it was not started as: nothing is ready, and the host's start bound ends it.
  if (message.mode !== mode || pool !== undefined || reads !== undefined) return;
  if (message.mode === 'calls') {
    const { TrustDomainPool, KillSwitch } = await (calls as NonNullable<typeof calls>);
    newCancel = () => new KillSwitch();
    pool = new TrustDomainPool(message.limits, (fault) => send({ type: 'fault', message: fault }));
    // A spare: its worker starts while it waits for a package.
    if (message.prestart === true) pool.prestart();
  } else {
    const { readInWorker } = await (readerModule as NonNullable<typeof readerModule>);
    reads = { heapMb: message.heapMb, timeoutMs: message.timeoutMs, readInWorker };
  }
  send({ type: 'ready' });
}

function handle(message: HostMessage): void {
  switch (message.type) {
    case 'init':
      init(message).catch((error: unknown) =>
        send({ type: 'fault', message: `the package's process could not start: ${String(error)}` }),
      );
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
  if (pool === undefined || newCancel === undefined) return;
  const { taskId } = task;
  const cancel = newCancel();
  running.set(taskId, cancel);
  // A call's start is told a moment late, and not at all when its reply comes first: one message,
  // and one wake-up of the host, per short call instead of two. Progress goes after it, in order.
  let started: NodeJS.Timeout | undefined;
  const tellStarted = () => {
    if (started === undefined) return;
    clearTimeout(started);
    started = undefined;
    send({ type: 'started', taskId });
  };
  pool
    .run(task, {
      signal: cancel,
      onStarted: () => {
        started = setTimeout(tellStarted, STARTED_HOLD_MS);
      },
      onProgress: (data) => {
        tellStarted();
        send({ type: 'progress', taskId, data });
      },
      onLogs: (logs) => {
        tellStarted();
        send({ type: 'log', taskId, logs });
      },
    })
    .then((reply) => {
      clearTimeout(started);
      started = undefined;
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
  const { heapMb, timeoutMs } = reads;
  reads
    .readInWorker(moduleUrl, execArgv, { heapMb, timeoutMs, workers: readers, closing: () => false })
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
