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
 * formed; the protected ports can't be transferred, so they can't be re-wrapped), the prototypes
 * that lead to the guard are frozen, `Object.prototype` takes no new properties (a getter for an
 * internal symbol there would be handed a port as `this`), and `parentPort` is removed from
 * `node:worker_threads`. The host validates every message regardless: this is defence in depth,
 * except for the two ports above, whose listeners are not ours.
 */
import { readlinkSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { types } from 'node:util';
import type * as workerThreads from 'node:worker_threads';

const require = createRequire(import.meta.url);
const threads = require('node:worker_threads') as typeof workerThreads & Record<string, unknown>;
const { MessagePort } = threads;
const apply = Reflect.apply;
const getPrototypeOf = Object.getPrototypeOf;
const isArray = Array.isArray;
const freeze = Object.freeze;
const nativePostMessage = MessagePort.prototype.postMessage;
const nativeStructuredClone = globalThis.structuredClone;
const isEncoding = Buffer.isEncoding;
const { isProxy, isUint8Array } = types;
const setHas = Set.prototype.has;
const isIn = (set: Set<object>, value: unknown): boolean => apply(setHas, set, [value]);

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

/**
 * What Node's worker sends on its internal port after start-up: stdio chunks for stdout or stderr.
 * Rebuilt from what was read (once) rather than passed on, so a getter can't show the check one
 * value and the serializer another. Undefined for anything else.
 */
function stdioPayload(message: unknown): object | undefined {
  if (typeof message !== 'object' || message === null || isProxy(message)) return undefined;
  const { type, stream, chunks } = message as Record<string, unknown>;
  if (type !== 'stdioPayload' || (stream !== 'stdout' && stream !== 'stderr')) return undefined;
  if (!isArray(chunks) || isProxy(chunks)) return undefined;
  const rebuilt: Array<{ chunk: string | Uint8Array; encoding: string | undefined }> = [];
  for (let index = 0; index < chunks.length; index++) {
    const item: unknown = chunks[index];
    if (typeof item !== 'object' || item === null || isProxy(item)) return undefined;
    const { chunk, encoding } = item as Record<string, unknown>;
    if (typeof chunk !== 'string' && !isUint8Array(chunk)) return undefined;
    if (
      encoding !== undefined &&
      encoding !== 'buffer' &&
      !(typeof encoding === 'string' && isEncoding(encoding))
    ) {
      return undefined;
    }
    rebuilt[index] = { chunk: chunk as string | Uint8Array, encoding: encoding as string | undefined };
  }
  return { type, stream, chunks: rebuilt };
}

function refused(what: string): never {
  throw new TypeError(`toolhost: ${what} is refused inside tool workers`);
}

/**
 * A transfer list (an array, or `{ transfer }`) copied once, or undefined when there is none; the copy
 * is what is checked and what the native call gets, so a getter can't swap a port in afterwards.
 */
function transferList(transfer: unknown): unknown[] | undefined {
  const list = isArray(transfer)
    ? transfer
    : typeof transfer === 'object' && transfer !== null
      ? (transfer as { transfer?: unknown }).transfer
      : undefined;
  if (list === undefined) return undefined;
  if (!isArray(list) || isProxy(list)) refused('a transfer list that is not a plain array');
  const copy: unknown[] = [];
  for (let index = 0; index < list.length; index++) copy[index] = list[index];
  return copy;
}

function checkTransfers(list: unknown[] | undefined, protectedPorts: Set<object>): void {
  if (list === undefined) return;
  for (const item of list) {
    if (isIn(protectedPorts, item)) refused("transferring the worker's ports to the host");
  }
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

/** Locks the channels down (once). Call it after the worker's start-up and before any tool import. */
export function lockdown(): void {
  if (lockedDown) return;
  lockedDown = true;
  const internalPorts = findInternalPorts();
  const protectedPorts = new Set<object>(internalPorts);
  if (threads.parentPort !== null) protectedPorts.add(threads.parentPort);

  function postMessage(this: object, message: unknown, transfer?: unknown) {
    if (message === null || message === undefined) refused('posting null or undefined on a MessagePort');
    if (isIn(internalPorts, this)) {
      const payload = stdioPayload(message);
      if (payload === undefined) refused("posting on Node's internal worker port");
      return apply(nativePostMessage, this, [payload]);
    }
    const list = transferList(transfer);
    checkTransfers(list, protectedPorts);
    return apply(nativePostMessage, this, list === undefined ? [message] : [message, list]);
  }
  Object.defineProperty(MessagePort.prototype, 'postMessage', {
    value: postMessage,
    writable: false,
    configurable: false,
    enumerable: true,
  });
  if (typeof nativeStructuredClone === 'function') {
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
  // MessagePort -> NodeEventTarget -> EventTarget: frozen, so nothing on the way to the guard moves.
  for (let prototype = MessagePort.prototype; prototype !== Object.prototype && prototype !== null; ) {
    freeze(prototype);
    prototype = getPrototypeOf(prototype);
  }

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
