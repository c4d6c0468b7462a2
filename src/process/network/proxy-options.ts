/** What an egress proxy is given: its socket, the package's grant, its bounds, what it reports. */
import type { CallBudget } from './call-budget.js';
import type { PolicySettings } from './policy.js';
import type { ProxySecrets } from './secrets/proxy-secrets.js';

export interface ProxyLimits {
  /** Open client connections the package may hold; one more is answered 503. */
  maxConnections: number;
  /** Bytes a connection may carry, both ways together; then it is cut. */
  maxBytesPerConnection: number;
  /** Bytes the package may move while one call is in flight, both ways together (see CallBudget). */
  maxBytesPerCall: number;
  /** A connection that carries nothing this long is closed. */
  idleTimeoutMs: number;
}

/** What the proxy reports of each request it decided. */
export interface NetworkNote {
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused (refusals only). */
  reason?: string;
  /** The address it connected to (allowed ones only). */
  address?: string;
  /**
   * Only for a cut over `maxNetworkBytesPerCall` (`host` empty, `port` 0): the bytes charged to the
   * call, or to the time between calls, when it ran over.
   */
  bytes?: number;
  /**
   * A secret's name: its placeholder was sent to `host` where the secret is not bound (it went on
   * unreplaced; `reason` says where in the request it was).
   */
  secret?: string;
}

export interface ProxyOptions {
  socketPath: string;
  policy: PolicySettings;
  limits: ProxyLimits;
  /** The calls in flight and what they may move. */
  budget: CallBudget;
  /** The package's secrets (none: nothing is intercepted or swapped). */
  secrets?: ProxySecrets | undefined;
  onNote(note: NetworkNote): void;
}
