/**
 * A package process's end of its channel to the host (descriptor 3), as the process reads it: a
 * socket where the process may open one, and where Node's permission model refuses that (Node 25
 * and later gate every socket behind `--allow-net`, which a process without a sandbox is not given
 * unless its package has the network) reads of the descriptor in Node's thread pool, one at a time.
 * Writing is frames.ts's `writeFrameSync`, the same either way. Node's functions are taken when this
 * module loads, before any tool code could replace them (the descriptor guard replaces `fs.read`
 * for tools, and refuses this descriptor there).
 */
import fs from 'node:fs';
import { Socket } from 'node:net';

const { read } = fs;
/** The most one read in the thread pool takes. */
const READ_BYTES = 64 * 1024;

export interface ChannelListener {
  onChunk(chunk: Buffer): void;
  /** The host ended the channel (it closed, or it is gone), or it failed. */
  onEnd(): void;
}

/** Starts reading `fd` as the channel. */
export function readChannel(fd: number, listener: ChannelListener): void {
  let socket: Socket;
  try {
    socket = new Socket({ fd, readable: true, writable: true });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_ACCESS_DENIED') throw error;
    readInThreadPool(fd, listener);
    return;
  }
  socket.on('data', (chunk: Buffer) => listener.onChunk(chunk));
  socket.on('end', listener.onEnd);
  socket.on('close', listener.onEnd);
  socket.on('error', listener.onEnd);
}

/**
 * The descriptor is still blocking (nothing in this process opened a socket on it): each read waits
 * in a thread of the pool until the host writes, and one is always pending while the channel is
 * open, which keeps the process alive as the socket would.
 */
function readInThreadPool(fd: number, listener: ChannelListener): void {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  const next = (): void => {
    read(fd, buffer, 0, READ_BYTES, null, (error, bytes) => {
      if (error !== null || bytes === 0) {
        listener.onEnd();
        return;
      }
      listener.onChunk(Buffer.from(buffer.subarray(0, bytes)));
      next();
    });
  };
  next();
}
