/**
 * `tty.ReadStream` / `tty.WriteStream` take a descriptor (the host's 0, 1 and 2 may be a terminal),
 * and so does the native TTY constructor behind them, which a tool reaches as a stream's
 * `_handle.constructor`. Both accept only a descriptor this tool owns, and take it out of the table
 * (the handle owns it now).
 *
 * Where the worker has Node's `tty_wrap` binding, the native constructor is replaced there, before
 * `node:tty` (or `child_process`) takes it from the binding: every route to a TTY passes it, and
 * neither `node:tty` nor `node:net` is loaded for it (about 1 ms of a worker's start). Elsewhere,
 * `node:tty`'s two classes are wrapped and the native constructor refused once a stream shows it.
 */
import { createRequire } from 'node:module';
import { builtinLoaded, nodeBinding } from './bindings.js';
import { badDescriptor, ownsDescriptor, releaseDescriptor } from './descriptor-table.js';
import { type AnyFunction, lock, refusedConstructor } from './locks.js';

const require = createRequire(import.meta.url);
const apply = Reflect.apply;
const construct = Reflect.construct;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const getPrototypeOf = Object.getPrototypeOf;
const SafeTypeError = TypeError;

type Constructor = AnyFunction & { prototype: object };

/** The native constructor, guarded in its binding; false where that route isn't open. */
function guardNativeTty(): boolean {
  if (builtinLoaded('tty') || builtinLoaded('internal/child_process')) return false;
  const binding = nodeBinding('tty_wrap');
  const Native = binding?.['TTY'] as Constructor | undefined;
  if (binding === undefined || typeof Native !== 'function' || typeof Native.prototype !== 'object') {
    return false;
  }
  const Guarded = function (this: unknown, fd: unknown, context?: { code?: unknown }) {
    if (new.target === undefined) throw new SafeTypeError('toolhost: the native TTY constructor needs `new`');
    if (!ownsDescriptor(fd)) throw badDescriptor(fd, 'tty');
    // biome-ignore lint/complexity/noArguments: a rest array reads holes through Array.prototype.
    const handle: unknown = construct(Native, arguments, new.target);
    // A descriptor that is no terminal leaves `code` in the context, and no handle owns it.
    if (typeof context !== 'object' || context === null || context.code === undefined) {
      releaseDescriptor(fd as number);
    }
    return handle;
  } as unknown as Constructor;
  // Handles keep the native prototype: `instanceof` answers as before, for Node's code and a tool's.
  Guarded.prototype = Native.prototype;
  lock(Native.prototype, 'constructor', Guarded);
  lock(binding, 'TTY', Guarded);
  return true;
}

/** node:tty's classes wrapped (the route for a worker without the binding). */
function guardTtyModule(): void {
  const tty = require('node:tty') as Record<string, Constructor>;
  for (const name of ['ReadStream', 'WriteStream']) {
    const Original = tty[name];
    if (typeof Original !== 'function') continue;
    const Guarded = function (this: unknown, fd: unknown) {
      if (!ownsDescriptor(fd)) throw badDescriptor(fd, `tty.${name}`);
      const stream = (
        new.target === undefined
          ? // biome-ignore lint/complexity/noArguments: see guardNativeTty.
            apply(Original, this, arguments)
          : // biome-ignore lint/complexity/noArguments: see guardNativeTty.
            construct(Original, arguments, new.target)
      ) as { _handle?: object | null };
      releaseDescriptor(fd as number);
      // The native TTY constructor takes a descriptor too: a tool holding one TTY must not make another.
      const handle = stream._handle;
      if (typeof handle === 'object' && handle !== null) {
        const prototype = getPrototypeOf(handle) as object;
        if (getOwnPropertyDescriptor(prototype, 'constructor')?.configurable !== false) {
          lock(prototype, 'constructor', refusedConstructor('constructing a native TTY handle'));
        }
      }
      return stream;
    } as unknown as Constructor;
    Guarded.prototype = Original.prototype;
    lock(Original.prototype, 'constructor', Guarded);
    tty[name] = Guarded;
  }
}

export function guardTty(): void {
  if (!guardNativeTty()) guardTtyModule();
}
