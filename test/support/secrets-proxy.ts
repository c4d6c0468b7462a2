/**
 * An egress proxy with one secret bound, started in the test's own thread: the secrets proxy's tests
 * that speak to it directly (no sandbox, no host) share how it is set up, and the server, its
 * certificates and its hosts stay each test's own.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { CallBudget } from '../../dist/src/process/network/call-budget.js';
import type { NetworkNote } from '../../dist/src/process/network/proxy-options.js';
import { startProxy } from '../../dist/src/process/network/proxy-server.js';
import { parseNetRules } from '../../dist/src/process/network/rules.js';
import { parseBoundHost } from '../../dist/src/process/network/secrets/bindings.js';
import type { certificatesFor } from '../../dist/src/process/network/secrets/certificate-authority.js';

export interface TestSecretsProxy {
  /** Where its Unix socket is made. */
  folder: string;
  packageName: string;
  /** The hosts it may reach (`host:port`), and the name each resolves to (all loopback here). */
  net: string[];
  testHosts: Record<string, string[]>;
  /** The one secret: its name, value and placeholder, and the `host:port` it is bound to. */
  secret: { name: string; value: string; placeholder: string; boundTo: string };
  /** What certificatesFor made: the proxy's leaves, and the CA it checks the real server against. */
  made: Awaited<ReturnType<typeof certificatesFor>>;
  notes: NetworkNote[];
  /** Told when the call's budget runs out (the proxy's open exchanges are held then). */
  onBudgetOver?: () => void;
}

/** Starts the proxy, its socket `proxy.sock` in `folder`: a megabyte per call and per connection. */
export async function startSecretsProxy(options: TestSecretsProxy): Promise<Server> {
  const rules = parseNetRules(options.net);
  const bound = parseBoundHost(options.secret.boundTo);
  if (!rules.ok || !bound.ok) throw new Error('bad rules');
  const { name, value, placeholder } = options.secret;
  return startProxy({
    socketPath: join(options.folder, 'proxy.sock'),
    policy: {
      packageName: options.packageName,
      grant: { kind: 'hosts', asked: rules.rules, granted: undefined },
      ownAddresses: new Set(),
      testHosts: options.testHosts,
    },
    limits: {
      maxConnections: 8,
      maxBytesPerConnection: 1 << 20,
      maxBytesPerCall: 1 << 20,
      idleTimeoutMs: 30_000,
    },
    budget: new CallBudget({ limit: 1 << 20, running: ['call'], onOver: () => options.onBudgetOver?.() }),
    secrets: {
      secrets: [{ name, value, placeholder, hosts: [bound.host] }],
      certificates: options.made.leaves,
      upstreamCa: [options.made.authority],
    },
    onNote: (note) => options.notes.push(note),
  });
}

/** Ends the proxy and the real server, their connections first, and removes the folder. */
export async function stopSecretsProxy(
  servers: Array<Server | undefined>,
  remove: () => Promise<void>,
): Promise<void> {
  for (const server of servers) server?.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server?.close(resolve))));
  await remove();
}

/** Writes `text` on `socket` and reads the whole answer (its body by length, or chunked to its end). */
export function exchange(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const onData = (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      const end = answer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = answer.slice(0, end);
      const length = /content-length: (\d+)/i.exec(head)?.[1];
      const whole =
        length === undefined
          ? /transfer-encoding: chunked/i.test(head) && answer.endsWith('\r\n0\r\n\r\n')
          : answer.length >= end + 4 + Number(length);
      if (whole) {
        stop();
        resolve(answer);
      }
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      reject(new Error(`closed after ${JSON.stringify(answer)}`));
    };
    // One exchange's listeners go with it: a kept-alive socket carries many exchanges.
    const stop = () => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('close', onClose);
    socket.write(text);
  });
}
