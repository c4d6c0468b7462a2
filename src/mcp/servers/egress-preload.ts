/**
 * Loaded into a sandboxed Node MCP server before its own code (`NODE_OPTIONS=--import`, see
 * server-egress.ts): points Node's `http`, `https` and `fetch` (and any undici the server bundles:
 * they share the global dispatcher) at the server's egress proxy through its Unix socket, as a
 * package process's are (process/network/child-agents.ts). Convenience, not the boundary: the
 * sandbox has no route out but that socket, so a server that resets the agents or opens a raw
 * socket reaches nothing.
 *
 * undici (what the dispatcher is made of) costs a Node process some 19 MB and 75 ms of CPU to load:
 * the dispatcher is loaded at the first request that needs it, so a server that never fetches (or
 * hasn't yet) doesn't carry it. Until then the global dispatcher is {@link LazyDispatcher}, which
 * hands each request on once it is loaded.
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { type EgressRoute, routeNodeAgents, tunnelsOf } from '../../process/network/tunnel-agents.js';

/** The proxy's socket, as the sandbox sees it. */
export const EGRESS_SOCKET_VARIABLE = 'TOOLHOST_EGRESS_SOCKET';
/** A PEM file the agents trust besides Node's roots (the secrets CA, tests' own CAs). */
export const EGRESS_TRUST_VARIABLE = 'TOOLHOST_EGRESS_TRUST';

/**
 * Where every undici (Node's own and any a server bundles) finds its global dispatcher: undici 7
 * sets both and reads the first; a later undici may read the second.
 */
const GLOBAL_DISPATCHERS = [Symbol.for('undici.globalDispatcher.1'), Symbol.for('undici.globalDispatcher.2')];

/** The part of an undici dispatcher the lazy one stands in for. */
interface Dispatcher {
  dispatch(options: unknown, handler: unknown): boolean;
  close(): Promise<void>;
  destroy(error?: Error | null): Promise<void>;
}

type RequestHandler = {
  onError?: (error: Error) => void;
  onResponseError?: (controller: unknown, error: Error) => void;
};

/** The tunnelled dispatcher, loaded with undici at the first request. */
class LazyDispatcher extends EventEmitter implements Dispatcher {
  readonly #route: EgressRoute;
  #loaded: Promise<Dispatcher> | undefined;
  #real: Dispatcher | undefined;

  constructor(route: EgressRoute) {
    super();
    this.#route = route;
  }

  dispatch(options: unknown, handler: unknown): boolean {
    if (this.#real !== undefined) return this.#real.dispatch(options, handler);
    this.#load().then(
      (real) => real.dispatch(options, handler),
      (error: unknown) => {
        const failure = error instanceof Error ? error : new Error(String(error));
        const callbacks = handler as RequestHandler;
        if (callbacks.onResponseError !== undefined) callbacks.onResponseError(undefined, failure);
        else callbacks.onError?.(failure);
      },
    );
    return true;
  }

  async close(): Promise<void> {
    await this.#real?.close();
  }

  async destroy(error?: Error | null): Promise<void> {
    await this.#real?.destroy(error);
  }

  #load(): Promise<Dispatcher> {
    this.#loaded ??= import('../../process/network/child-agents.js').then(({ tunnelledDispatcher }) => {
      const { open, ca } = tunnelsOf(this.#route);
      const real = tunnelledDispatcher(open, ca) as unknown as Dispatcher;
      this.#real = real;
      return real;
    });
    return this.#loaded;
  }
}

const socketPath = process.env[EGRESS_SOCKET_VARIABLE];
if (socketPath !== undefined && socketPath !== '') {
  const trustFile = process.env[EGRESS_TRUST_VARIABLE];
  let trustCertificates: string | undefined;
  try {
    trustCertificates =
      trustFile === undefined || trustFile === '' ? undefined : readFileSync(trustFile, 'utf8');
  } catch {
    // Without it only Node's roots are trusted: a bound host's interception then fails its TLS check.
    trustCertificates = undefined;
  }
  const route = { socketPath, trustCertificates };
  const { open, ca } = tunnelsOf(route);
  routeNodeAgents(open, ca);
  const dispatcher = new LazyDispatcher(route);
  for (const key of GLOBAL_DISPATCHERS) (globalThis as Record<symbol, unknown>)[key] = dispatcher;
}
