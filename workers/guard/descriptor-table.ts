/**
 * The descriptors a tool owns in this worker (or package process). A worker thread shares the host
 * process's descriptor table (a package process, its own, with its channel to the host in it), and
 * Node's permission model checks paths, never descriptors: without this, `fs.closeSync(5)`
 * closes whatever the host holds as 5 (libuv then aborts the process on its own next use of it), and
 * `fs.closeSync(1)` followed by an open in the tool's tmpDir hands the tool the host's stdout.
 *
 * So every descriptor a tool passes to `node:fs` must be one that this worker opened through `node:fs`
 * (`open`, `openSync`, and what `node:fs` opens for itself: `writeFileSync(path)`, streams made from a
 * path); anything else is refused with `EBADF`, as the OS answers for a descriptor that isn't open.
 * A descriptor leaves the table when it is closed through `node:fs` or handed to a socket (which then
 * owns it). Writes to 1 and 2 never get this far: the call worker's capture takes them first.
 */
import fs from 'node:fs';

const apply = Reflect.apply;
const defineProperty = Object.defineProperty;
const SafeError = Error;
const nextTick = process.nextTick;
const { add: setAdd, delete: setDelete, has: setHas } = Set.prototype;

const owned = new Set<number>();

/** Whether this worker opened `fd` through `node:fs` and has not closed or handed it on since. */
export function ownsDescriptor(fd: unknown): boolean {
  return typeof fd === 'number' && apply(setHas, owned, [fd]) === true;
}

/** Takes `fd` out of the table: it is closed, or something else (a socket) owns it now. */
export function releaseDescriptor(fd: number): void {
  apply(setDelete, owned, [fd]);
}

function adopt(fd: unknown): void {
  if (typeof fd === 'number' && fd >= 0) apply(setAdd, owned, [fd]);
}

/** The error a refused descriptor gets: what the OS says for a closed one, and why. */
export function badDescriptor(fd: unknown, syscall: string): Error {
  const error = new SafeError(
    `EBADF: bad file descriptor, ${syscall} (descriptor ${String(fd)} was not opened by this tool; toolhost refuses the host's descriptors)`,
  );
  // Defined, not assigned (a tool may have put setters for these names on Error.prototype), and
  // without an array loop (its iterator is a tool's to replace).
  const field = { writable: true, enumerable: true, configurable: true };
  defineProperty(error, 'code', { ...field, value: 'EBADF' });
  defineProperty(error, 'errno', { ...field, value: -9 });
  defineProperty(error, 'syscall', { ...field, value: syscall });
  return error;
}

type AnyFunction = (...args: unknown[]) => unknown;
const table = fs as unknown as Record<string, AnyFunction>;

/**
 * Writable, as Node leaves them: the call worker's capture and libraries such as graceful-fs wrap
 * these in turn. A tool that replaces one gains nothing: the guarded function is the only one it
 * can reach (Node's own code that uses a replaced `fs.openSync` goes through the guard for every
 * read, write and close of what it returns).
 */
function replace(name: string, value: AnyFunction): void {
  defineProperty(table, name, { value, writable: true, configurable: true, enumerable: true });
}

/**
 * `arguments`, never a rest array: a hole in an array reads through `Array.prototype`, where a
 * tool's getter could show the check one descriptor and the call another.
 */
function guardSync(name: string, releases: boolean): void {
  const original = table[name];
  if (typeof original !== 'function') return;
  replace(name, function (this: unknown) {
    // biome-ignore lint/complexity/noArguments: see above.
    const fd: unknown = arguments.length > 0 ? arguments[0] : undefined;
    if (typeof fd === 'number') {
      if (!ownsDescriptor(fd)) throw badDescriptor(fd, name.replace(/Sync$/, ''));
      if (releases) releaseDescriptor(fd);
    }
    // biome-ignore lint/complexity/noArguments: see above.
    return apply(original, this, arguments);
  });
}

/** A refused callback call answers through its callback, as Node does for an OS error. */
function guardCallback(name: string, releases: boolean): void {
  const original = table[name];
  if (typeof original !== 'function') return;
  replace(name, function (this: unknown) {
    // biome-ignore lint/complexity/noArguments: see guardSync.
    const args = arguments;
    const fd: unknown = args.length > 0 ? args[0] : undefined;
    if (typeof fd === 'number') {
      if (!ownsDescriptor(fd)) {
        const callback: unknown = args.length > 1 ? args[args.length - 1] : undefined;
        const error = badDescriptor(fd, name);
        if (typeof callback !== 'function') throw error;
        apply(nextTick, process, [callback, error]);
        return undefined;
      }
      if (releases) releaseDescriptor(fd);
    }
    return apply(original, this, args);
  });
}

/**
 * `open` adopts what `openSync` returned, on a later tick. Node's own `open` hands its result to a
 * request object's `oncomplete`, and `async_hooks` hands that object to any tool that asks (an
 * `init` hook's resource): calling `oncomplete(null, 1)` would have adopted the host's stdout.
 * Opening synchronously also keeps a blocking open (a FIFO) on the tool's own thread rather than on
 * the libuv threadpool the whole host shares.
 */
function guardOpen(): void {
  const openSync = table['openSync'] as AnyFunction;
  const open = table['open'] as AnyFunction;
  const guardedOpenSync = function (this: unknown) {
    // biome-ignore lint/complexity/noArguments: see guardSync.
    const fd = apply(openSync, this, arguments);
    adopt(fd);
    return fd;
  };
  replace('openSync', guardedOpenSync);
  replace('open', function (this: unknown) {
    // biome-ignore lint/complexity/noArguments: see guardSync.
    const given = arguments;
    const last = given.length - 1;
    const callback: unknown = last >= 1 ? given[last] : undefined;
    // Node's own validation answers a call without a callback (it throws before opening anything).
    if (typeof callback !== 'function') return apply(open, this, given);
    const args: unknown[] = [];
    for (let index = 0; index < last; index++) {
      defineProperty(args, index, {
        value: given[index],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    apply(nextTick, process, [
      () => {
        let fd: unknown;
        try {
          fd = apply(openSync, fs, args);
        } catch (error) {
          apply(callback, undefined, [error]);
          return;
        }
        adopt(fd);
        apply(callback, undefined, [null, fd]);
      },
    ]);
    return undefined;
  });
}

/** Every `node:fs` function whose first argument is a descriptor (or may be one). */
const SYNC_DESCRIPTOR_FUNCTIONS = [
  'fchmodSync',
  'fchownSync',
  'fdatasyncSync',
  'fstatSync',
  'fsyncSync',
  'ftruncateSync',
  'futimesSync',
  'readSync',
  'readvSync',
  'writeSync',
  'writevSync',
  // A path or a descriptor:
  'readFileSync',
  'writeFileSync',
  'appendFileSync',
  'truncateSync',
];

const CALLBACK_DESCRIPTOR_FUNCTIONS = [
  'fchmod',
  'fchown',
  'fdatasync',
  'fstat',
  'fsync',
  'ftruncate',
  'futimes',
  'read',
  'readv',
  'write',
  'writev',
  'readFile',
  'writeFile',
  'appendFile',
  'truncate',
];

/** Installs the table's guard on `node:fs` (the callers sync the ESM named exports afterwards). */
export function guardFsDescriptors(): void {
  guardOpen();
  guardSync('closeSync', true);
  guardCallback('close', true);
  for (const name of SYNC_DESCRIPTOR_FUNCTIONS) guardSync(name, false);
  for (const name of CALLBACK_DESCRIPTOR_FUNCTIONS) guardCallback(name, false);
}
