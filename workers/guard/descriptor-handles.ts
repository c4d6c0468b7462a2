/**
 * The routes to a descriptor that don't go through `node:fs`'s functions (see descriptor-table.ts):
 *
 * - `fs.promises.open`'s FileHandle. Its methods act on whatever `handle.fd` says, and a tool can
 *   reach the class (`handle.constructor`), its prototype's methods (callable on any object) and the
 *   native handle's constructor (`new (handle[kHandle].constructor)(1)` owns descriptor 1). So the
 *   methods answer only for handles `fs.promises.open` made here, each handle's descriptor is read
 *   from its native handle (a tool can't point it elsewhere), and both constructors are refused.
 * - Sockets: `new net.Socket({ fd })`, `server.listen({ fd })`, `dgram`'s `bind({ fd })` and
 *   `handle.open(fd)` on a socket's own libuv handle all end in the handle prototypes' `open`, which
 *   accepts only a descriptor this tool owns (and takes it out of the table: the socket owns it now).
 * - `tty.ReadStream` / `tty.WriteStream` and the native TTY constructor behind them: tty-handles.ts.
 */

import { createRequire } from 'node:module';
import { constants } from 'node:os';
import * as types from 'node:util/types';
import { nativePrototype } from './bindings.js';
import { badDescriptor, ownsDescriptor, releaseDescriptor } from './descriptor-table.js';
import { type AnyFunction, lock, refusedConstructor } from './locks.js';
import { guardTty } from './tty-handles.js';

const require = createRequire(import.meta.url);
const apply = Reflect.apply;
const ownKeys = Reflect.ownKeys;
const defineProperty = Object.defineProperty;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const getOwnPropertySymbols = Object.getOwnPropertySymbols;
const getPrototypeOf = Object.getPrototypeOf;
const freeze = Object.freeze;
const prototypeOf = Object.prototype.isPrototypeOf;
const SafePromise = Promise;
const promiseThen = Promise.prototype.then;
const promiseReject = Promise.reject;
const { add: weakAdd, has: weakHas } = WeakSet.prototype;
const { isProxy } = types;
const describeSymbol = getOwnPropertyDescriptor(Symbol.prototype, 'description')?.get as (
  this: symbol,
) => string;
/** What libuv's `open` returns for a refused descriptor (its errors are negated errno values). */
const UV_EBADF = -(constants.errno.EBADF ?? 9);

/** FileHandles made by `fs.promises.open` in this worker (a tool can forge any other object). */
const genuine = new WeakSet<object>();
const isGenuine = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && apply(weakHas, genuine, [value]) === true;

interface FileHandleShape {
  prototype: object;
  kFd: symbol;
  kHandle: symbol;
  nativeFd: (native: object) => unknown;
}
let fileHandles: FileHandleShape | undefined;

function symbolNamed(target: object, description: string): symbol | undefined {
  const symbols = getOwnPropertySymbols(target);
  for (let index = 0; index < symbols.length; index++) {
    const symbol = symbols[index] as symbol;
    if (apply(describeSymbol, symbol, []) === description) return symbol;
  }
  return undefined;
}

/**
 * The first FileHandle a tool is given shows the classes, before the tool holds any: every method of
 * the prototype (but the one that rebuilds a transferred handle, which is not yet one of ours) then
 * refuses a handle it didn't make.
 */
function learnFileHandles(handle: object): FileHandleShape | undefined {
  const kFd = symbolNamed(handle, 'kFd');
  const kHandle = symbolNamed(handle, 'kHandle');
  const native = kHandle === undefined ? undefined : (handle as Record<symbol, unknown>)[kHandle];
  if (kFd === undefined || kHandle === undefined || typeof native !== 'object' || native === null) {
    return undefined;
  }
  const nativePrototype = getPrototypeOf(native) as object;
  const fdGetter = getOwnPropertyDescriptor(nativePrototype, 'fd')?.get;
  if (typeof fdGetter !== 'function') return undefined;
  const prototype = getPrototypeOf(handle) as object;
  const keys = ownKeys(prototype);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as PropertyKey;
    if (
      key === 'constructor' ||
      (typeof key === 'symbol' && key.description === 'messaging_deserialize_symbol')
    ) {
      continue;
    }
    const method = getOwnPropertyDescriptor(prototype, key)?.value;
    if (typeof method !== 'function') continue;
    lock(prototype, key, function (this: unknown) {
      if (!isGenuine(this))
        throw badDescriptor('of a FileHandle fs.promises.open did not make', 'FileHandle');
      // biome-ignore lint/complexity/noArguments: a rest array reads holes through Array.prototype.
      return apply(method as AnyFunction, this, arguments);
    });
  }
  lock(prototype, 'constructor', refusedConstructor('constructing a FileHandle'));
  lock(nativePrototype, 'constructor', refusedConstructor('constructing a native file handle'));
  freeze(prototype);
  freeze(nativePrototype);
  return { prototype, kFd, kHandle, nativeFd: (target) => apply(fdGetter, target, []) };
}

/**
 * A handle's descriptor, as its methods and `fs.promises` read it, is its native handle's while that
 * is open and -1 after (Node's own close sets -1, and nothing sets it back): a tool can't point it at
 * another descriptor, nor keep using a number that the host may have been given again.
 */
function adoptFileHandle(handle: unknown): unknown {
  if (typeof handle !== 'object' || handle === null) return handle;
  fileHandles ??= learnFileHandles(handle);
  const shape = fileHandles;
  // A Node whose FileHandle this doesn't know: none are handed out unguarded.
  if (shape === undefined) throw badDescriptor('of a FileHandle toolhost does not know', 'open');
  const native = (handle as Record<symbol, unknown>)[shape.kHandle] as object;
  let closed = false;
  const fd = (): number => {
    if (closed) return -1;
    const current = shape.nativeFd(native);
    if (typeof current === 'number' && current >= 0) return current;
    closed = true;
    return -1;
  };
  const setFd = (value: unknown) => {
    if (value === -1) closed = true;
  };
  defineProperty(handle, shape.kFd, { get: fd, set: setFd, enumerable: false, configurable: false });
  defineProperty(handle, 'fd', { get: fd, enumerable: false, configurable: false });
  lock(handle, shape.kHandle, native);
  apply(weakAdd, genuine, [handle]);
  return handle;
}

/** A FileHandle-like object given where `fs.promises` takes a path or a handle, that isn't ours. */
function forgedFileHandle(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || isGenuine(value)) return false;
  // A proxy can answer `instanceof FileHandle` one way here and the other way in Node.
  if (isProxy(value)) return true;
  return fileHandles !== undefined && apply(prototypeOf, fileHandles.prototype, [value]) === true;
}

function guardPromises(): void {
  const promises = require('node:fs/promises') as Record<string, AnyFunction>;
  const open = promises['open'] as AnyFunction;
  promises['open'] = function (this: unknown) {
    // The intrinsic `then`: a tool's Promise.prototype.then can't hand the adopter a forged handle.
    // biome-ignore lint/complexity/noArguments: see learnFileHandles.
    return apply(promiseThen, apply(open, promises, arguments), [adoptFileHandle]);
  };
  for (const name of ['readFile', 'writeFile', 'appendFile']) {
    const original = promises[name];
    if (typeof original !== 'function') continue;
    promises[name] = function (this: unknown) {
      // biome-ignore lint/complexity/noArguments: see learnFileHandles.
      const target: unknown = arguments.length > 0 ? arguments[0] : undefined;
      if (forgedFileHandle(target)) {
        return apply(promiseReject, SafePromise, [badDescriptor('of a forged FileHandle', name)]);
      }
      // biome-ignore lint/complexity/noArguments: see learnFileHandles.
      return apply(original, promises, arguments);
    };
  }
}

/** libuv's `open(fd)` on a Pipe, TCP or UDP handle: only a descriptor this tool owns, handed over. */
function guardHandleOpen(prototype: object): void {
  const open = (prototype as { open?: unknown }).open;
  if (typeof open !== 'function') return;
  lock(prototype, 'open', function (this: unknown, fd: unknown) {
    if (!ownsDescriptor(fd)) return UV_EBADF;
    // biome-ignore lint/complexity/noArguments: see learnFileHandles.
    const result = apply(open as AnyFunction, this, arguments);
    if (result === 0) releaseDescriptor(fd as number);
    return result;
  });
}

/** libuv's socket handle classes, by binding: every net and dgram socket's handle is one of these. */
const SOCKET_HANDLES = [
  ['tcp_wrap', 'TCP'],
  ['pipe_wrap', 'Pipe'],
  ['udp_wrap', 'UDP'],
] as const;

/**
 * The prototypes of libuv's socket handles: from Node's bindings where this worker has them, else
 * from sockets made and dropped here (no connection is tried: each `connect` throws on its argument
 * after the handle exists).
 */
function guardSockets(): void {
  const prototypes = SOCKET_HANDLES.map(([binding, name]) => nativePrototype(binding, name));
  if (
    prototypes.every((prototype) => typeof (prototype as { open?: unknown } | undefined)?.open === 'function')
  ) {
    for (const prototype of prototypes) guardHandleOpen(prototype as object);
    return;
  }
  const net = require('node:net') as typeof import('node:net');
  for (const options of [{ path: 1 }, { port: -1, host: '127.0.0.1' }]) {
    const socket = new net.Socket();
    try {
      socket.connect(options as unknown as import('node:net').SocketConnectOpts);
    } catch {
      // Expected: see above.
    }
    const handle = (socket as unknown as { _handle?: object | null })._handle;
    if (typeof handle === 'object' && handle !== null) guardHandleOpen(getPrototypeOf(handle) as object);
    socket.destroy();
  }
  const dgram = require('node:dgram') as typeof import('node:dgram');
  // A lookup of its own: the default one loads node:dns (about 1 to 3 ms of every worker's start on
  // Node 20) for a socket that never resolves a name. The handle, and so its prototype, is the same.
  const udp = dgram.createSocket({ type: 'udp4', lookup: () => {} });
  const state = symbolNamed(udp, 'state symbol');
  const handle =
    state === undefined ? undefined : (udp as unknown as Record<symbol, { handle?: unknown }>)[state]?.handle;
  if (typeof handle === 'object' && handle !== null) guardHandleOpen(getPrototypeOf(handle) as object);
  udp.close();
}

/**
 * Installs the guards above, and tty-handles.ts's (the callers sync the ESM named exports
 * afterwards).
 */
export function guardDescriptorHandles(): void {
  guardPromises();
  guardSockets();
  guardTty();
}
