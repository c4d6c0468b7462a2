/**
 * How the egress proxy moves data: one stream into another with backpressure (a destination that
 * takes no more pauses its source, so a tool writing fast to a slow server fills the kernel's socket
 * buffers and then waits, and the proxy holds at most a chunk and a stream's high-water mark per
 * direction), charging each chunk before it is written, so a limit stops the chunk that crosses it.
 */
import type { Link } from './call-budget.js';
import type { ProxyOptions } from './proxy-options.js';

/** What a relay may change in the bytes it moves (a secret's swap): what goes on of each chunk, and at the end. */
export interface ChunkMap {
  push(chunk: Buffer): Buffer;
  end(): Buffer;
}

/** What a relay reads from: a stream, or anything that emits chunks and an end and can wait. */
export interface RelaySource {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  once(event: 'end', listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

/** What a relay writes to: a stream, or anything that takes chunks, says when it is full, and ends. */
export interface RelaySink {
  write(chunk: Buffer): boolean;
  end(): unknown;
  end(chunk: Buffer): unknown;
  on(event: 'drain', listener: () => void): unknown;
}

export class Relay implements Link {
  readonly #charge: (bytes: number) => boolean;
  readonly #destroy: () => void;
  readonly #sources = new Set<RelaySource>();
  #held = false;

  /**
   * `charge` is asked before every chunk moves (false: it doesn't, and the relay has been held or
   * destroyed); `destroy` closes every stream of the relay.
   */
  constructor(options: { charge(bytes: number): boolean; destroy(): void }) {
    this.#charge = options.charge;
    this.#destroy = options.destroy;
  }

  /**
   * Moves `from` into `to`, each chunk through `map` if given (what it gives is what is charged);
   * the end of `from` ends `to`.
   */
  pipe(from: RelaySource, to: RelaySink, map?: ChunkMap): void {
    this.#sources.add(from);
    from.on('data', (chunk: Buffer) => {
      if (this.#held) return;
      const out = map === undefined ? chunk : map.push(chunk);
      if (out.length === 0 || !this.#charge(out.length)) return;
      if (!to.write(out)) from.pause();
    });
    // A drain must not undo a hold: the held relay waits to be closed.
    to.on('drain', () => {
      if (!this.#held) from.resume();
    });
    from.once('end', () => {
      const tail = map?.end();
      if (tail !== undefined && tail.length > 0 && !this.#held && this.#charge(tail.length)) to.end(tail);
      else to.end();
    });
    if (this.#held) from.pause();
  }

  /** Whether a budget holds the relay (nothing moves until it is closed). */
  get held(): boolean {
    return this.#held;
  }

  hold(): void {
    this.#held = true;
    for (const source of this.#sources) source.pause();
  }

  destroy(): void {
    this.#destroy();
  }
}

/**
 * The relay of one proxied HTTP exchange's bodies, both ways: each chunk counts for the client
 * connection (`used`: past `maxBytesPerConnection` the relay is destroyed) and for the call's
 * budget. `ends.destroy` ends the exchange (the upstream request or answer, the answer to the tool,
 * the client's connection); the budget holds the relay until `ends.whenClosed` says the exchange is
 * over.
 */
export function exchangeRelay(
  options: Pick<ProxyOptions, 'limits' | 'budget'>,
  used: { bytes: number },
  ends: { destroy(): void; whenClosed(listener: () => void): void },
): Relay {
  const bodies = new Relay({
    charge: (bytes) => {
      used.bytes += bytes;
      if (used.bytes > options.limits.maxBytesPerConnection) {
        bodies.destroy();
        return false;
      }
      return options.budget.charge(bytes);
    },
    destroy: ends.destroy,
  });
  ends.whenClosed(options.budget.add(bodies));
  return bodies;
}
