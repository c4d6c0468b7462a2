/**
 * A running server's calls as its egress proxy charges them: each call is told to the proxy when
 * it is sent and when it is answered, so the bytes the server moves meanwhile are that call's
 * (`maxNetworkBytesPerCall`, see process/network/call-budget.ts). A call that moves more is failed at
 * once with {@link NETWORK_OVER_CODE} (the relay answers it `TOOL_ACCESS_DENIED`) and its request is
 * cancelled, so the server hears `notifications/cancelled`; the proxy closes its connections.
 */
import type { PackageEgress } from '../../process/network/egress.js';

/** The code of a call's error when it moved more than `maxNetworkBytesPerCall` through the proxy. */
export const NETWORK_OVER_CODE = 'ERR_TOOLHOST_NETWORK_OVER';

let callSequence = 0;

export class EgressCalls {
  readonly #egress: PackageEgress;
  /** Each call in flight, by its id: what fails it when it runs over its bytes. */
  readonly #overs = new Map<string, (message: string) => void>();

  constructor(egress: PackageEgress) {
    this.#egress = egress;
    egress.watchCalls((taskId, message) => this.#overs.get(taskId)?.(message));
  }

  /** Runs one call's request, charged to it; `request` gets the signal that cancels it. */
  async run<T>(signal: AbortSignal, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
    callSequence += 1;
    const taskId = `server-call-${callSequence}`;
    // Charged from here to its answer: what the server moves meanwhile is this call's.
    await this.#egress.begin(taskId);
    const cancel = new AbortController();
    try {
      const over = new Promise<never>((_, reject) => {
        this.#overs.set(taskId, (message) => {
          const error = Object.assign(new Error(message), { code: NETWORK_OVER_CODE });
          reject(error);
          cancel.abort(error);
        });
      });
      return await Promise.race([request(AbortSignal.any([signal, cancel.signal])), over]);
    } finally {
      this.#overs.delete(taskId);
      this.#egress.end(taskId);
    }
  }

  /** Ends the proxy (with the server's process). */
  close(): Promise<void> {
    return this.#egress.close();
  }
}
