/**
 * The CA the egress proxies present certificates from, made once per host process, and a key and
 * certificate per bound host name, made at most once per host process and name and kept (in this
 * process's memory only: nothing of it is written but the CA's certificate, for the sandbox to
 * trust). Made in a thread of their own (certificate-worker.ts), kept for later batches, one batch
 * at a time.
 */
import { Worker } from 'node:worker_threads';
import { srcFile } from '../../../own-files.js';
import type { CertificateAnswer, CertificateRequest } from './certificate-worker.js';

const CERTIFICATE_WORKER = srcFile('process/network/secrets/certificate-worker.js');

type KeyPair = { key: string; certificate: string };

let authority: KeyPair | undefined;
const leaves = new Map<string, KeyPair>();
/** One batch at a time, so the CA is made once and no name twice. */
let queue: Promise<unknown> = Promise.resolve();

/** The CA's certificate (PEM) and a key and certificate for each host name, made if not yet. */
export function certificatesFor(
  hosts: readonly string[],
): Promise<{ authority: string; leaves: Record<string, KeyPair> }> {
  const next = queue.then(async () => {
    const missing = [...new Set(hosts)].filter((host) => !leaves.has(host));
    if (authority === undefined || missing.length > 0) {
      const answer = await make({ authority, hosts: missing });
      authority = answer.authority;
      for (const [host, pair] of Object.entries(answer.leaves)) leaves.set(host, pair);
    }
    const own: Record<string, KeyPair> = {};
    for (const host of hosts) {
      const pair = leaves.get(host);
      if (pair !== undefined) own[host] = pair;
    }
    return { authority: (authority as KeyPair).certificate, leaves: own };
  });
  queue = next.catch(() => {});
  return next;
}

/** The thread, kept for later batches (unreferenced: it never keeps the host process alive). */
let worker: Worker | undefined;

/**
 * Ends the certificate thread, if one runs, as a crash would (a batch in flight fails); the next
 * batch starts another, and the CA and certificates made so far are kept. For tests.
 */
export async function endCertificateThread(): Promise<void> {
  await worker?.terminate();
}

function make(request: CertificateRequest): Promise<CertificateAnswer> {
  return new Promise((resolve, reject) => {
    if (worker === undefined) {
      const started = new Worker(CERTIFICATE_WORKER, { env: {} });
      started.unref();
      // Whatever ended it (an error first, or nothing asked of it at the time), the next batch
      // starts a new thread instead of posting to a dead one.
      started.once('exit', () => {
        if (worker === started) worker = undefined;
      });
      worker = started;
    }
    const thread = worker;
    const settle = () => {
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
    };
    const onMessage = (message: { ok: boolean; answer?: CertificateAnswer; message?: string }) => {
      settle();
      if (message.ok && message.answer !== undefined) resolve(message.answer);
      else
        reject(new Error(`the secrets CA could not make a certificate (${message.message ?? 'no answer'})`));
    };
    const onError = (error: Error) => {
      settle();
      if (worker === thread) worker = undefined;
      void thread.terminate();
      reject(new Error(`the secrets CA could not make a certificate (${error.message})`));
    };
    const onExit = () => {
      settle();
      if (worker === thread) worker = undefined;
      reject(new Error('the secrets CA could not make a certificate (its thread ended)'));
    };
    thread.on('message', onMessage);
    thread.once('error', onError);
    thread.once('exit', onExit);
    thread.postMessage(request);
  });
}
