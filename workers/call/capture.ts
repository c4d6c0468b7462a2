/**
 * A tool's printing never reaches the host's stdout (which may be a protocol channel): what it
 * writes through `process.stdout`/`process.stderr`, `console`, `process._rawDebug` or `node:fs`
 * (`write`, `writev`, `writeFile` and their sync forms) on file descriptors 1 and 2 is kept, up to
 * `maxLogChars` characters per call, and handed to the host with the call's reply, or while the call
 * runs when the host listens (forward-logs.ts). Writes that get around this (`Writable.prototype.write.call(process.stdout)`)
 * reach the worker's own stdio stream, which the host reads and drops: it is not piped to the host's.
 */
import fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { activeCall } from './active-call.js';
import { forwardSoon } from './forward-logs.js';

// Required rather than imported, as in src/boundary/encode-result.ts: on Node 26 an ESM import of
// `node:util` evaluates all of its lazy exports (their colour support reads `process.stderr`) in
// every call worker.
const { format } = createRequire(import.meta.url)('node:util') as typeof import('node:util');

type Stream = 'stdout' | 'stderr';

const decode = (chunk: unknown): string => {
  if (typeof chunk === 'string') return chunk;
  try {
    return Buffer.from(chunk as Uint8Array).toString('utf8');
  } catch {
    return '';
  }
};

function keep(stream: Stream, value: string, maxLogChars: number): void {
  const call = activeCall();
  if (call === undefined || value === '') return;
  const room = maxLogChars - call.logChars;
  const kept = room >= value.length ? value : value.slice(0, Math.max(room, 0));
  call.droppedLogChars += value.length - kept.length;
  if (kept === '') return;
  call.logChars += kept.length;
  // Consecutive writes to one stream share an entry, so a million one-byte writes stay one entry.
  const last = call.logs[call.logs.length - 1];
  if (last !== undefined && last.stream === stream) last.text += kept;
  else call.logs.push({ stream, text: kept });
  forwardSoon(call);
}

export function installCapture(maxLogChars: number): void {
  captureStreams(maxLogChars);
  captureFsWrites(maxLogChars);
  syncBuiltinESMExports();
}

/** `process.stdout`, `process.stderr` and `process._rawDebug`. */
function captureStreams(maxLogChars: number): void {
  const capture = (stream: Stream) =>
    ((chunk: unknown, ...rest: unknown[]): boolean => {
      keep(stream, decode(chunk), maxLogChars);
      const callback = rest.find((item) => typeof item === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture('stdout');
  process.stderr.write = capture('stderr');

  // `_rawDebug` writes to the process's stderr file descriptor, past every stream.
  Object.defineProperty(process, '_rawDebug', {
    value: (...args: unknown[]) => keep('stderr', `${format(...args)}\n`, maxLogChars),
    writable: false,
    configurable: false,
  });
}

/** Which of the process's streams a file descriptor is, if it is one. */
const streamOf = (fd: unknown): Stream | undefined => (fd === 1 ? 'stdout' : fd === 2 ? 'stderr' : undefined);

/** The bytes a write of `data` reports written. */
const lengthOf = (data: unknown) =>
  typeof data === 'string' ? Buffer.byteLength(data) : ((data as Uint8Array | undefined)?.byteLength ?? 0);

/** What a vectored write writes, as text. */
const joined = (buffers: unknown) =>
  Array.isArray(buffers) ? buffers.map((buffer) => decode(buffer)).join('') : decode(buffers);

/** The bytes a vectored write reports written. */
const totalLength = (buffers: unknown) =>
  Array.isArray(buffers) ? buffers.reduce((sum: number, buffer) => sum + lengthOf(buffer), 0) : 0;

/**
 * File descriptors 1 and 2 are the whole process's: what a tool writes there through node:fs is
 * captured like its other printing (sync loggers such as pino's destination(1) do this).
 */
function captureFsWrites(maxLogChars: number): void {
  const original = {
    writeSync: fs.writeSync,
    write: fs.write,
    writevSync: fs.writevSync,
    writev: fs.writev,
    writeFileSync: fs.writeFileSync,
  };
  fs.writeSync = ((fd: unknown, data: unknown, ...rest: unknown[]) => {
    const stream = streamOf(fd);
    if (stream === undefined)
      return (original.writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
    keep(stream, decode(data), maxLogChars);
    return lengthOf(data);
  }) as typeof fs.writeSync;
  fs.write = ((fd: unknown, data: unknown, ...rest: unknown[]) => {
    const stream = streamOf(fd);
    if (stream === undefined) return (original.write as (...args: unknown[]) => void)(fd, data, ...rest);
    keep(stream, decode(data), maxLogChars);
    const callback = rest.find((item) => typeof item === 'function') as
      | ((error: null, written: number, data: unknown) => void)
      | undefined;
    if (callback !== undefined) queueMicrotask(() => callback(null, lengthOf(data), data));
  }) as typeof fs.write;
  fs.writevSync = ((fd: unknown, buffers: unknown, ...rest: unknown[]) => {
    const stream = streamOf(fd);
    if (stream === undefined)
      return (original.writevSync as (...args: unknown[]) => number)(fd, buffers, ...rest);
    keep(stream, joined(buffers), maxLogChars);
    return totalLength(buffers);
  }) as typeof fs.writevSync;
  fs.writev = ((fd: unknown, buffers: unknown, ...rest: unknown[]) => {
    const stream = streamOf(fd);
    if (stream === undefined) return (original.writev as (...args: unknown[]) => void)(fd, buffers, ...rest);
    keep(stream, joined(buffers), maxLogChars);
    const callback = rest.find((item) => typeof item === 'function') as
      | ((error: null, written: number, buffers: unknown) => void)
      | undefined;
    if (callback !== undefined) queueMicrotask(() => callback(null, totalLength(buffers), buffers));
  }) as typeof fs.writev;
  fs.writeFileSync = ((file: unknown, data: unknown, ...rest: unknown[]) => {
    const stream = streamOf(file);
    if (stream === undefined)
      return (original.writeFileSync as (...args: unknown[]) => void)(file, data, ...rest);
    keep(stream, decode(data), maxLogChars);
  }) as typeof fs.writeFileSync;
}
