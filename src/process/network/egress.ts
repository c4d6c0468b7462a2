/**
 * A package's way out of its sandbox, as the host holds it: the egress proxy's thread and the
 * folder its Unix socket is in (bound into the sandbox, see sandbox.ts). Started when the package's
 * first process starts, ended with the package's pool. What the thread reports is the host's own
 * code speaking, but it is still checked before it becomes a `network` event. The host tells the
 * thread when each call begins and ends (see call-budget.ts): the package's process never does.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChildInit } from '../../boundary/child-protocol.js';
import type { CallSettings } from '../../boundary/protocol.js';
import { srcFile } from '../../own-files.js';
import type { NetworkGrant } from './grant.js';
import type { NetworkNote, ProxyLimits } from './proxy-options.js';
import type { ProxyHostMessage, ProxyWorkerData, ProxyWorkerMessage } from './proxy-worker.js';
import type { GrantedSecret } from './secrets/granted-secrets.js';
import { type SandboxSecrets, secretsDoor } from './secrets/secrets-door.js';

const PROXY_WORKER = srcFile('process/network/proxy-worker.js');
/** The proxy thread's heap: its data is piped, never held, so this is plenty and a bound. */
const PROXY_HEAP_MB = 64;
/** How many times a proxy thread that ended is started again. */
const MAX_RESTARTS = 3;

/** A `network` event: one connection the package's proxy allowed or refused. */
export interface NetworkEvent extends NetworkNote {
  /** The package (its `package.json` `name`). */
  packageName: string;
  /** The package folder it was loaded from. */
  source: string;
}

/** What every package's egress shares: the host's bounds, and where events go. */
export interface EgressSettings {
  limits: ProxyLimits;
  /** Names and addresses the proxies use instead of DNS (tests only). */
  testHosts: Record<string, string[]> | undefined;
  /** PEM certificates the package processes' agents trust besides Node's roots (tests only). */
  trustCertificates: string | undefined;
  onNetwork(event: NetworkEvent): void;
}

/** Where a sandboxed process finds its proxy. */
export interface EgressDoor {
  /** The folder bound into the sandbox. */
  folder: string;
  /** What its processes are told (see child-agents.ts). */
  route: NonNullable<CallSettings['egress']>;
  /** Variables its processes' tools see: each secret's placeholder, and where the CA is. */
  env: Record<string, string>;
}

const CHILD_AGENTS = srcFile('process/network/child-agents.js').href;

/** A calls process's init, its tools routed through the proxy (and given its placeholders). */
export function routedInit(init: ChildInit, door: Pick<EgressDoor, 'route' | 'env'>): ChildInit {
  if (init.mode !== 'calls') return init;
  const env = { ...init.limits.env, ...door.env };
  return { ...init, limits: { ...init.limits, env, call: { ...init.limits.call, egress: door.route } } };
}

let sequence = 0;

export class PackageEgress {
  readonly #options: {
    packageName: string;
    source: string;
    grant: NetworkGrant;
    folder: string;
    secrets: readonly GrantedSecret[];
    alwaysOpen: boolean;
    subject: string;
  };
  /** The package's secrets as its proxy and its processes hold them (made on the first open). */
  #secrets: SandboxSecrets | undefined;
  readonly #settings: EgressSettings;
  #opened: Promise<EgressDoor> | undefined;
  #worker: Worker | undefined;
  #closed = false;
  #restarts = 0;
  /** The package's calls in flight, as the host knows them (a restarted thread is told them). */
  readonly #running = new Set<string>();
  /** Calls waiting for the thread to say it charges them. */
  readonly #beginning = new Map<string, () => void>();
  #onOver: ((taskId: string, message: string) => void) | undefined;

  constructor(
    options: {
      packageName: string;
      source: string;
      grant: NetworkGrant;
      tmpRoot: string;
      secrets?: readonly GrantedSecret[];
      /** An MCP server's proxy: it takes connections between calls too (see CallBudget). */
      alwaysOpen?: boolean;
      /** Who the grant is of, in messages: `package <packageName>` unless given (`MCP server fs`). */
      subject?: string;
    },
    settings: EgressSettings,
  ) {
    sequence += 1;
    this.#options = {
      ...options,
      folder: join(options.tmpRoot, `egress-${sequence}`),
      secrets: options.secrets ?? [],
      alwaysOpen: options.alwaysOpen === true,
      subject: options.subject ?? `package ${options.packageName}`,
    };
    this.#settings = settings;
  }

  /** Whether the package has secrets granted: its processes use the proxy even without a sandbox. */
  get hasSecrets(): boolean {
    return this.#options.secrets.length > 0;
  }

  /** The proxy, listening (started on the first call). */
  open(): Promise<EgressDoor> {
    // A start that failed (a certificate, the CA's file) is tried again by the next call.
    this.#opened ??= this.#start().catch((error: unknown) => {
      this.#opened = undefined;
      throw error;
    });
    return this.#opened;
  }

  /** Hears each call that ran over `maxNetworkBytesPerCall`, with the error it answers. */
  watchCalls(onOver: (taskId: string, message: string) => void): void {
    this.#onOver = onOver;
  }

  /**
   * A call is about to be sent to the package's process; resolves once the proxy charges it, so its
   * first connection can't reach a proxy that doesn't yet know it runs. Without a proxy thread (none
   * started, or one starting again) at once: a thread started later is told the calls in flight.
   */
  begin(taskId: string): Promise<void> {
    this.#running.add(taskId);
    const worker = this.#worker;
    if (worker === undefined || this.#closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#beginning.set(taskId, resolve);
      this.#post(worker, { type: 'begin', taskId });
    });
  }

  /** The package's process gave a call back: it is charged no more. */
  end(taskId: string): void {
    this.#running.delete(taskId);
    this.#begun(taskId);
    if (this.#worker !== undefined) this.#post(this.#worker, { type: 'end', taskId });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const taskId of [...this.#beginning.keys()]) this.#begun(taskId);
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate().catch(() => 0);
    await rm(this.#options.folder, { recursive: true, force: true }).catch(() => {});
  }

  async #start(): Promise<EgressDoor> {
    const { folder, packageName, grant } = this.#options;
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const socketPath = join(folder, 'proxy.sock');
    await rm(socketPath, { force: true });
    if (this.#closed) throw new Error('the package was closed');
    const trust = this.#settings.trustCertificates;
    this.#secrets ??=
      this.#options.secrets.length === 0
        ? undefined
        : await secretsDoor({ folder, secrets: this.#options.secrets, trustCertificates: trust });
    const data: ProxyWorkerData = {
      socketPath,
      packageName,
      grant,
      limits: this.#settings.limits,
      testHosts: this.#settings.testHosts,
      running: [...this.#running],
      secrets: this.#secrets?.proxy,
      alwaysOpen: this.#options.alwaysOpen,
      subject: this.#options.subject,
    };
    const worker = new Worker(PROXY_WORKER, {
      workerData: data,
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: PROXY_HEAP_MB },
    });
    this.#worker = worker;
    worker.unref();
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (message: ProxyWorkerMessage) => {
        if (message?.type === 'listening') resolve();
        else if (message?.type === 'failed')
          reject(new Error(`its network proxy failed: ${message.message}`));
        else if (message?.type === 'note') this.#note(message);
        else if (message?.type === 'begun') this.#begun(String(message.taskId));
        else if (message?.type === 'over') this.#over(worker, message);
      });
      worker.on('error', (error) => reject(new Error(`its network proxy failed: ${error.message}`)));
      worker.once('exit', () => {
        reject(new Error('its network proxy ended'));
        // Its calls run on; a thread started again is told them.
        for (const taskId of [...this.#beginning.keys()]) this.#begun(taskId);
        this.#ended(worker);
      });
    });
    const trusted = [trust, this.#secrets?.authority].filter((pem) => pem !== undefined).join('\n');
    return {
      folder,
      route: {
        setup: CHILD_AGENTS,
        socketPath,
        ...(trusted === '' ? {} : { trustCertificates: trusted }),
      },
      env: this.#secrets?.env ?? {},
    };
  }

  /**
   * A proxy thread that ended while its package still runs (out of its heap, say) is started again
   * on the same socket, which the running process sees through its bound folder; a few times only.
   */
  #ended(worker: Worker): void {
    if (this.#closed || this.#worker !== worker || this.#restarts >= MAX_RESTARTS) return;
    this.#restarts += 1;
    this.#worker = undefined;
    const opened = this.#start();
    this.#opened = opened;
    opened.catch(() => {});
  }

  #begun(taskId: string): void {
    const resolve = this.#beginning.get(taskId);
    this.#beginning.delete(taskId);
    resolve?.();
  }

  #post(worker: Worker, message: ProxyHostMessage): void {
    try {
      worker.postMessage(message);
    } catch {
      // A thread that ended takes no messages; the one started again is told the calls in flight.
    }
  }

  /**
   * A call (or the time between calls) ran over `maxNetworkBytesPerCall`. The proxy holds every open
   * connection until the call is answered here, then closes them, so the call's error is the limit,
   * not its tool's reaction to a connection cut under it.
   */
  #over(worker: Worker, message: Extract<ProxyWorkerMessage, { type: 'over' }>): void {
    const { subject } = this.#options;
    const limit = Number(message.limit);
    const taskId = typeof message.taskId === 'string' ? message.taskId : undefined;
    if (taskId !== undefined) {
      try {
        this.#onOver?.(
          taskId,
          `the process isolation tier closed the network connections of ${subject}: the call moved more than ${limit} bytes (maxNetworkBytesPerCall)`,
        );
      } catch {
        // The call's answer is the pool's; its connections close either way.
      }
      this.#post(worker, { type: 'cut', taskId });
    }
    this.#emit({
      host: '',
      port: 0,
      allowed: false,
      reason:
        taskId === undefined
          ? `more than ${limit} bytes moved while no call of ${subject} ran (maxNetworkBytesPerCall)`
          : `a call of ${subject} moved more than ${limit} bytes (maxNetworkBytesPerCall)`,
      bytes: Number(message.bytes),
    });
  }

  #note(message: Extract<ProxyWorkerMessage, { type: 'note' }>): void {
    this.#emit({
      host: String(message.host),
      port: Number(message.port),
      allowed: message.allowed === true,
      ...(typeof message.reason === 'string' ? { reason: message.reason } : {}),
      ...(typeof message.address === 'string' ? { address: message.address } : {}),
      ...(typeof message.secret === 'string' ? { secret: message.secret } : {}),
    });
  }

  #emit(note: NetworkNote): void {
    const event: NetworkEvent = {
      packageName: this.#options.packageName,
      source: this.#options.source,
      ...note,
    };
    try {
      this.#settings.onNetwork(event);
    } catch {
      // A listener's throw must not end the proxy's reports.
    }
  }
}
