/**
 * The entry point of a package's process (the process tier). It talks to the host over descriptor 3
 * only (length-prefixed frames, see frames.ts) and is, for one package version, either where its
 * calls run, one at a time on this main thread (workers/call/process-calls.ts: one V8 isolate per
 * process, with a call worker's lockdown and hardening), or where its declarations are read, each in
 * a throwaway worker. The host trusts none of what this process sends (a tool can take it over);
 * this code only keeps an honest process honest.
 */

import type { ChildMessage, HostMessage, StartProcessCalls } from '../../boundary/child-protocol.js';
import type { ReplyLimits } from '../../boundary/parse-call-reply.js';
import type { TrackedWorker } from '../../calls/thread-reaper.js';
import type { readInWorker } from '../../declaration/read-worker.js';
import { workersFile } from '../../own-files.js';
import { FrameReader } from '../channel/frame-reader.js';
import { encodeFrame, writeFrameSync } from '../channel/frames.js';
import { readChannel } from './child-channel.js';
import { closeInheritedDescriptors } from './child-fds.js';
import { replyFrame } from './child-reply.js';

/** The channel to the host. */
const CHANNEL_FD = 3;

// Before anything else: descriptors the host's own parents left open are not for tools. On Linux a
// process that can't list its own (its /proc refused) runs nothing: it can't know what it holds.
const descriptorsClosed =
  closeInheritedDescriptors(new Set([0, 1, 2, CHANNEL_FD])) !== undefined || process.platform !== 'linux';

/**
 * What this process is for, as the host started it (its first argument): only that part of toolhost
 * is loaded, and it loads while the host places this process in its cgroup after its hello, rather
 * than before the hello (the process's start-up is most of a first call's time).
 */
const mode = process.argv[2] === 'reads' ? 'reads' : 'calls';
const callsModule =
  mode === 'calls'
    ? (import(workersFile('call/process-calls.js').href) as Promise<{ startProcessCalls: StartProcessCalls }>)
    : undefined;
const readerModule = mode === 'reads' ? import('../../declaration/read-worker.js') : undefined;

/** What the host may send in one frame: a call's arguments are the model's input. */
const MAX_HOST_FRAME_BYTES = 256 * 1024 * 1024;

const frames = new FrameReader({ maxFrameBytes: MAX_HOST_FRAME_BYTES });
const exit = process.exit.bind(process);

/** The bounds of this process's replies, from the host's init (calls only). */
let replyLimits: ReplyLimits | undefined;

/**
 * Writes straight to the channel's descriptor, whole, before it returns: one system call for a
 * message, no stream in between, and a fault's reply is out before the exit that follows it.
 */
function send(message: ChildMessage): void {
  try {
    const frame =
      message.type === 'reply' && replyLimits !== undefined
        ? replyFrame(message, replyLimits)
        : encodeFrame(message);
    writeFrameSync(CHANNEL_FD, frame);
  } catch {
    // The channel is gone: the host has ended this process, or is about to.
  }
}

let run: ((task: Extract<HostMessage, { type: 'run' }>['task']) => void) | undefined;
let reads: { heapMb: number; timeoutMs: number; readInWorker: typeof readInWorker } | undefined;
let initialized = false;
const readers = new Set<TrackedWorker>();

async function init(message: Extract<HostMessage, { type: 'init' }>): Promise<void> {
  // Told to be what it was not started as: nothing is ready, and the host's start bound ends it.
  if (message.mode !== mode || initialized) return;
  initialized = true;
  if (!descriptorsClosed) throw new Error('it could not list its descriptors, to close those it inherited');
  if (message.mode === 'calls') {
    const { startProcessCalls } = await (callsModule as NonNullable<typeof callsModule>);
    const { limits } = message;
    replyLimits = { maxResultBytes: limits.call.maxResultBytes, maxLogChars: limits.call.maxLogChars };
    run = await startProcessCalls({
      settings: { ...limits.call, allowAddons: limits.allowAddons, permissionTier: 'process' },
      env: limits.env,
      send,
      exit,
    });
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
        // The host says it could not start; this says why.
        send({ type: 'fault', message: error instanceof Error ? error.message : String(error) }),
      );
      return;
    case 'run':
      run?.(message.task);
      return;
    case 'read':
      read(message.readId, message.moduleUrl, message.execArgv);
      return;
  }
}

function read(readId: number, moduleUrl: string, execArgv: string[]): void {
  if (reads === undefined) return;
  const { heapMb, timeoutMs } = reads;
  reads
    .readInWorker(moduleUrl, execArgv, { heapMb, timeoutMs, workers: readers, closing: () => false })
    .then((outcome) => send({ type: 'read', readId, outcome }))
    .catch(() => {});
}

readChannel(CHANNEL_FD, {
  onChunk: (chunk) => {
    const result = frames.push(chunk);
    if (!result.ok) {
      exit(70);
      return;
    }
    for (const value of result.values) {
      try {
        handle(value as HostMessage);
      } catch (error) {
        send({
          type: 'fault',
          message: `the package's process failed to handle a message: ${String(error)}`,
        });
      }
    }
  },
  // The host ended the channel (it closed, or it is gone): so does this process.
  onEnd: () => exit(0),
});

send({ type: 'hello' });
