/** A self-signed certificate for `bench.test` (ECDSA P-256, two days), made with openssl in `folder`. */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Makes the certificate and its key in `folder`; resolves with both as PEM text. */
export async function benchCertificate(folder) {
  const keyFile = join(folder, 'key.pem');
  const certFile = join(folder, 'cert.pem');
  execFileSync(
    'openssl',
    [
      ...[
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
      ],
      ...['-subj', '/CN=bench.test', '-addext', 'subjectAltName=DNS:bench.test'],
      ...['-keyout', keyFile, '-out', certFile],
    ],
    { stdio: 'ignore' },
  );
  return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
}
