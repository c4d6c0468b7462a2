/**
 * The secrets proxy's parts that fail and come back: the thread that makes certificates, ended
 * (between batches, and with a batch in flight), is started again for the next bound host, from the
 * same CA; a package's proxy whose first start failed is started by the next call.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NetworkEvent, PackageEgress } from '../dist/src/process/network/egress.js';
import { parseBoundHost } from '../dist/src/process/network/secrets/bindings.js';
import {
  certificatesFor,
  endCertificateThread,
} from '../dist/src/process/network/secrets/certificate-authority.js';
import { removeDir, tempDir } from './support/tool-packages.js';

let root: string;

beforeAll(async () => {
  root = await tempDir('toolhost-secrets-recovery-');
});

afterAll(async () => {
  await removeDir(root);
});

/** Whether `certificate` (PEM) was signed by `authority` (PEM) and names `host`. */
function issuedFor(certificate: string, authority: string, host: string): boolean {
  const leaf = new X509Certificate(certificate);
  const ca = new X509Certificate(authority);
  return leaf.checkIssued(ca) && leaf.verify(ca.publicKey) && leaf.checkHost(host) === host;
}

describe('the certificate thread', () => {
  it('ended between batches, is started again: the next bound host gets a certificate from the same CA', async () => {
    const first = await certificatesFor(['one.recovery.test']);
    expect(
      issuedFor(first.leaves['one.recovery.test']?.certificate ?? '', first.authority, 'one.recovery.test'),
    ).toBe(true);
    await endCertificateThread();
    const next = await certificatesFor(['two.recovery.test', 'one.recovery.test']);
    expect(next.authority).toBe(first.authority);
    expect(
      issuedFor(next.leaves['two.recovery.test']?.certificate ?? '', first.authority, 'two.recovery.test'),
    ).toBe(true);
    // What was made is kept, not made again.
    expect(next.leaves['one.recovery.test']).toEqual(first.leaves['one.recovery.test']);
  });

  it('ended with a batch in flight: that batch fails with a clear error, the next one is made', async () => {
    await certificatesFor(['three.recovery.test']);
    const inFlight = certificatesFor(['four.recovery.test']);
    // Before the batch reaches the thread (it is posted after this turn's microtasks).
    const ended = endCertificateThread();
    await expect(inFlight).rejects.toThrow(
      /^the secrets CA could not make a certificate \(its thread ended\)$/,
    );
    await ended;
    const next = await certificatesFor(['four.recovery.test']);
    expect(
      issuedFor(next.leaves['four.recovery.test']?.certificate ?? '', next.authority, 'four.recovery.test'),
    ).toBe(true);
  });
});

describe("a package's proxy whose first start failed", () => {
  it('is started by the next call: its placeholders, its CA and its socket are there', async () => {
    // Its folder can't be made under a file.
    const tmpRoot = join(root, 'tmp');
    await writeFile(tmpRoot, 'not a folder');
    const events: NetworkEvent[] = [];
    const host = parseBoundHost('api.recovery.test');
    if (!host.ok) throw new Error(host.reason);
    const egress = new PackageEgress(
      {
        packageName: 'recovery-tools',
        source: join(root, 'recovery-tools'),
        grant: { kind: 'hosts', asked: undefined, granted: undefined },
        tmpRoot,
        secrets: [{ name: 'API_TOKEN', value: 'real-value-0123456789', hosts: [host.host] }],
      },
      {
        limits: {
          maxConnections: 8,
          maxBytesPerConnection: 1 << 20,
          maxBytesPerCall: 1 << 20,
          idleTimeoutMs: 10_000,
        },
        testHosts: {},
        trustCertificates: undefined,
        onNetwork: (event) => events.push(event),
      },
    );
    try {
      await expect(egress.open()).rejects.toThrow(/ENOTDIR/);
      await rm(tmpRoot);
      await mkdir(tmpRoot);
      const door = await egress.open();
      expect(door.env['API_TOKEN']).toMatch(/^toolhost-secret-[A-Za-z0-9_-]{32}$/);
      expect(await readFile(door.env['NODE_EXTRA_CA_CERTS'] ?? '', 'utf8')).toContain('BEGIN CERTIFICATE');
      // Its proxy listens: a request with no call running is refused, in words.
      const answer = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
        const sent = request(
          {
            socketPath: door.route.socketPath,
            path: 'http://api.recovery.test/',
            headers: { host: 'api.recovery.test' },
          },
          (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              body += chunk;
            });
            response.on('end', () => resolve({ status: response.statusCode, body }));
          },
        );
        sent.on('error', reject);
        sent.end();
      });
      expect(answer.status).toBe(403);
      expect(answer.body).toContain('no call of package recovery-tools is running');
      // The same door again: the proxy is started once.
      expect(await egress.open()).toBe(door);
    } finally {
      await egress.close();
    }
  });
});
