/**
 * Puts the worker's channels to the host out of a tool's reach, before any tool code runs in this
 * worker ("lockdown, then harden"). A tool shares this realm with the protocol code, so it could
 * otherwise post on a port whose listener lives on the host's main thread, where one malformed
 * message kills the whole process:
 *
 * - piscina's task port: piscina's listener on the host destructures each message (`null` throws);
 * - Node's internal worker port (`process.stdout[kPort]`, reachable through the stream's own
 *   symbols): the host's `Worker` asserts on a message type it doesn't know (`{ type: 'x' }` throws);
 * - `parentPort`, which carries toolhost's own messages (these are validated on the host anyway).
 *
 * So: every `MessagePort#postMessage` in this worker goes through one guard (no `null` or `undefined`
 * on any port; on Node's internal port only the stdio messages Node itself sends there, well
 * formed, and its fatal-exception report without its payload; on piscina's task port only plain
 * data of bounded depth and size; the protected ports can't be transferred, so they can't be
 * re-wrapped), the prototypes that lead to the guard are frozen, `Object.prototype` takes no new
 * properties (a getter for an internal symbol there would be handed a port as `this`), and
 * `parentPort` is removed from `node:worker_threads`. The guard itself never reads or writes through
 * a prototype a tool can still patch (no `for...of`, no `array[index] =`). The host validates every
 * message regardless: this is defence in depth, except for the two ports above, whose listeners are
 * not ours.
 */
import { readlinkSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type * as workerThreads from 'node:worker_threads';
import { checkPlainData, MAX_DATA_DEPTH } from '../../src/boundary/plain-data.js';
import {
  checkTransfers,
  fatalReport,
  isIn,
  refused,
  replacedReply,
  stdioPayload,
  transferList,
} from './port-messages.js';

const require = createRequire(import.meta.url);
const threads = require('node:worker_threads') as typeof workerThreads & Record<string, unknown>;
const { MessagePort } = threads;
const apply = Reflect.apply;
const getPrototypeOf = Object.getPrototypeOf;
const freeze = Object.freeze;
const nativePostMessage = MessagePort.prototype.postMessage;
const nativeStructuredClone = globalThis.structuredClone;
// Taken now, before hardenWorker removes it from tool code: it lists every port this worker holds.
const getActiveHandles = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles;

/** Node's internal port to the host, found as an own symbol property of the worker's stdio streams. */
function findInternalPorts(): Set<object> {
  const ports = new Set<object>();
  for (const stream of [process.stdout, process.stderr, process.stdin]) {
    for (const key of Object.getOwnPropertySymbols(stream)) {
      const value = (stream as unknown as Record<symbol, unknown>)[key];
      if (value instanceof MessagePort) ports.add(value);
    }
  }
  return ports;
}

/** The worker's own line to the host: taken before any tool code can replace what it uses. */
export interface PrivateChannel {
  /** Posts on `parentPort` (a no-op when there is none). */
  post(message: unknown): void;
  /** The OS thread id of this worker, on Linux (for ending child processes that block it). */
  osThreadId: number | null;
}

export function takePrivateChannel(): PrivateChannel {
  const port = threads.parentPort;
  let osThreadId: number | null = null;
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(id) && id > 0) osThreadId = id;
  } catch {
    // Not Linux, or the strict tier can't read /proc: the host then can't end such child processes.
  }
  return {
    post: (message) => {
      if (port !== null) apply(nativePostMessage, port, [message]);
    },
    osThreadId,
  };
}

let lockedDown = false;

export interface LockdownOptions {
  /**
   * The most a reply on piscina's task port may be (about its JSON size); a larger one is replaced
   * there, so a reply the tool grew after it was checked never takes the host's memory.
   * @default no bound
   */
  maxReplyBytes?: number;
  /**
   * Vouches for a message on piscina's task port that needs no walk: a reply the worker built of
   * nothing but what it checked, frozen (see workers/call/own-replies.ts). Anything it does not
   * vouch for is walked.
   * @default vouches for nothing
   */
  vouchesFor?: (message: unknown) => boolean;
}

/** Locks the channels down (once). Call it after the worker's start-up and before any tool import. */
export function lockdown(options: LockdownOptions = {}): void {
  if (lockedDown) return;
  lockedDown = true;
  const ports = heldPorts();
  guardPostMessage(ports, {
    maxReplyBytes: options.maxReplyBytes ?? Number.MAX_VALUE,
    vouchesFor: options.vouchesFor ?? (() => false),
  });
  guardStructuredClone(ports.protectedPorts);
  // MessagePort -> NodeEventTarget -> EventTarget: frozen, so nothing on the way to the guard moves.
  for (let prototype = MessagePort.prototype; prototype !== Object.prototype && prototype !== null; ) {
    freeze(prototype);
    prototype = getPrototypeOf(prototype);
  }
  sealThreads();
}

/**
 * The lockdown of a package process's main thread (the process tier), where tools run beside the
 * process's own line to the host, its channel (src/process/child/child-main.ts), and no port leads to a
 * thread of the host: `node:worker_threads` sealed and `Object.prototype` closed, as in a worker.
 */
export function lockdownMainThread(): void {
  if (lockedDown) return;
  lockedDown = true;
  sealThreads();
}

/** The ports this worker holds that a tool may not post on, transfer or take over. */
interface HeldPorts {
  /** Node's own (the worker's stdio and its internal messages). */
  internalPorts: Set<object>;
  /** piscina's task port, which carries the call's reply. */
  taskPorts: Set<object>;
  /** All of them, and the parent port. */
  protectedPorts: Set<object>;
}

function heldPorts(): HeldPorts {
  const internalPorts = findInternalPorts();
  const protectedPorts = new Set<object>(internalPorts);
  if (threads.parentPort !== null) protectedPorts.add(threads.parentPort);
  // piscina's task port (held in its worker's closure) is among the ports this worker holds open.
  const taskPorts = new Set<object>();
  for (const handle of getActiveHandles === undefined ? [] : apply(getActiveHandles, process, [])) {
    if (handle instanceof MessagePort && !protectedPorts.has(handle)) taskPorts.add(handle);
  }
  for (const port of taskPorts) protectedPorts.add(port);
  return { internalPorts, taskPorts, protectedPorts };
}

/** `MessagePort.prototype.postMessage`, replaced for good by one that guards the held ports. */
function guardPostMessage(
  { internalPorts, taskPorts, protectedPorts }: HeldPorts,
  { maxReplyBytes, vouchesFor }: Required<LockdownOptions>,
): void {
  function postMessage(this: object, message: unknown, transfer?: unknown) {
    if (message === null || message === undefined) refused('posting null or undefined on a MessagePort');
    if (isIn(internalPorts, this)) {
      const fatal = fatalReport(message);
      if (fatal === null) return undefined;
      const payload = fatal ?? stdioPayload(message);
      if (payload === undefined) refused("posting on Node's internal worker port");
      return apply(nativePostMessage, this, [payload]);
    }
    const list = transferList(transfer);
    checkTransfers(list, protectedPorts);
    // piscina's listener on the host reads each reply off this port, some of them synchronously
    // (receiveMessageOnPort): one it can't deserialize (nested deeper than the host's stack allows, a
    // host object whose deserializer throws) would throw there and end the host. A call's reply is
    // plain data, and the serializer reads it right after this check (no tool code can run between:
    // the check reads no getter and nothing a tool can patch), so what passes is what crosses. A
    // reply the worker vouches for is frozen plain data of bounded size already: it is not walked.
    if (isIn(taskPorts, this) && !vouchesFor(message)) {
      const check = checkPlainData(message, { maxDepth: MAX_DATA_DEPTH + 4, maxBytes: maxReplyBytes });
      if (!check.ok) message = replacedReply(message, check.problem);
    }
    return apply(nativePostMessage, this, list === undefined ? [message] : [message, list]);
  }
  Object.defineProperty(MessagePort.prototype, 'postMessage', {
    value: postMessage,
    writable: false,
    configurable: false,
    enumerable: true,
  });
}

/** `structuredClone` may not transfer a held port either (it would detach it from its owner). */
function guardStructuredClone(protectedPorts: Set<object>): void {
  if (typeof nativeStructuredClone !== 'function') return;
  const structuredClone = (value: unknown, options?: unknown) => {
    const list = transferList(options);
    checkTransfers(list, protectedPorts);
    return apply(
      nativeStructuredClone,
      globalThis,
      list === undefined ? [value] : [value, { transfer: list }],
    );
  };
  Object.defineProperty(globalThis, 'structuredClone', {
    value: structuredClone,
    writable: false,
    configurable: false,
    enumerable: false,
  });
}

/** No way back to the parent port or into another context; `node:worker_threads` frozen, and `Object.prototype` closed to new properties. */
function sealThreads(): void {
  Object.defineProperty(threads, 'parentPort', { value: null, writable: false, configurable: false });
  Object.defineProperty(threads, 'moveMessagePortToContext', {
    value: () => refused('moving a MessagePort into another context'),
    writable: false,
    configurable: false,
  });
  freeze(threads);
  syncBuiltinESMExports();
  Object.preventExtensions(Object.prototype);
}
