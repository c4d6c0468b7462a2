/**
 * The thread that makes the secrets CA and its certificates, with `@peculiar/x509` on WebCrypto
 * (ECDSA P-256: a key in well under a millisecond, a certificate in a few). It runs apart from the
 * host's own thread because the library needs `reflect-metadata`, which adds to the global
 * `Reflect`: that change stays in this thread. Given the CA (or none yet) and host names, it posts
 * the CA and a key and certificate per name, all PEM. It stays (unreferenced) for the next batch:
 * loading the library is most of a batch's time.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

import { isIP } from 'node:net';
import { parentPort } from 'node:worker_threads';
import * as x509 from '@peculiar/x509';

/** What the host hands the thread. */
export interface CertificateRequest {
  /** The CA made earlier in this host process (its key PKCS#8 PEM), or undefined to make one. */
  authority: { key: string; certificate: string } | undefined;
  hosts: string[];
}

export interface CertificateAnswer {
  authority: { key: string; certificate: string };
  leaves: Record<string, { key: string; certificate: string }>;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Longer than any host process runs (a `serve` may run for months); the CA lives only in the memory
 * of the process that made it, and only that process's sandboxes trust it.
 */
const VALID_DAYS = 3650;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

async function make(request: CertificateRequest): Promise<CertificateAnswer> {
  const notBefore = new Date(Date.now() - DAY_MS);
  const notAfter = new Date(Date.now() + VALID_DAYS * DAY_MS);
  let authorityKey: CryptoKey;
  let authority: x509.X509Certificate;
  if (request.authority === undefined) {
    const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
    authorityKey = keys.privateKey;
    authority = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: `CN=toolhost secrets CA ${process.pid} ${serial().slice(0, 8)}`,
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
  } else {
    authorityKey = await webcrypto.subtle.importKey(
      'pkcs8',
      pemBody(request.authority.key),
      ALGORITHM,
      false,
      ['sign'],
    );
    authority = new x509.X509Certificate(request.authority.certificate);
  }
  const leaves: CertificateAnswer['leaves'] = {};
  for (const host of request.hosts) {
    const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: isIP(host) === 0 ? `CN=${host}` : 'CN=toolhost secrets',
      issuer: authority.subject,
      notBefore,
      notAfter,
      signingKey: authorityKey,
      publicKey: keys.publicKey,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: isIP(host) === 0 ? 'dns' : 'ip', value: host }]),
        await x509.AuthorityKeyIdentifierExtension.create(authority),
      ],
    });
    leaves[host] = { key: await keyPem(keys.privateKey), certificate: certificate.toString('pem') };
  }
  const authorityPem = request.authority ?? {
    key: await keyPem(authorityKey),
    certificate: authority.toString('pem'),
  };
  return { authority: authorityPem, leaves };
}

function serial(): string {
  // Positive: the first byte's high bit clear.
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] as number) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

function pemBody(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

// One batch at a time, as the host sends them (it waits for each answer before the next).
parentPort?.on('message', (request: CertificateRequest) => {
  make(request).then(
    (answer) => parentPort?.postMessage({ ok: true, answer }),
    (error: unknown) => parentPort?.postMessage({ ok: false, message: String(error) }),
  );
});
