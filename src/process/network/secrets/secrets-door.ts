/**
 * A package's secrets as its egress hands them out, made when its proxy first opens: a placeholder
 * per secret (unguessable, made for this package's pool in this host process), the certificates its
 * proxy presents for the bound hosts, the CA written where its sandbox can read it, and the variables
 * its tools see: each secret's name set to its placeholder, `NODE_EXTRA_CA_CERTS` (Node programs a
 * tool starts) and `SSL_CERT_FILE` (OpenSSL programs: the usual roots and the CA) pointing at it.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { certificatesFor } from './certificate-authority.js';
import type { GrantedSecret } from './granted-secrets.js';
import type { ProxySecrets } from './proxy-secrets.js';
import { makePlaceholder } from './replace.js';

export interface SandboxSecrets {
  /** What the proxy thread is handed. */
  proxy: ProxySecrets;
  /** The CA's certificate (PEM), which the sandbox's agents trust. */
  authority: string;
  env: Record<string, string>;
}

export async function secretsDoor(options: {
  folder: string;
  secrets: readonly GrantedSecret[];
  trustCertificates: string | undefined;
}): Promise<SandboxSecrets> {
  const hosts = [...new Set(options.secrets.flatMap((secret) => secret.hosts.map(({ rule }) => rule.host)))];
  const made = await certificatesFor(hosts);
  const caFile = join(options.folder, 'secrets-ca.pem');
  const bundleFile = join(options.folder, 'secrets-trust.pem');
  try {
    await writeFile(caFile, made.authority, { mode: 0o644 });
    await writeFile(bundleFile, [...rootCertificates, made.authority].join('\n'), { mode: 0o644 });
  } catch (error) {
    throw new Error(
      `the secrets CA could not be written to ${caFile} (${(error as NodeJS.ErrnoException).code ?? String(error)}); check \`tempRoot\``,
    );
  }
  const secrets = options.secrets.map((secret) => ({ ...secret, placeholder: makePlaceholder() }));
  const env: Record<string, string> = { NODE_EXTRA_CA_CERTS: caFile, SSL_CERT_FILE: bundleFile };
  for (const secret of secrets) env[secret.name] = secret.placeholder;
  return {
    proxy: { secrets, certificates: made.leaves, upstreamCa: upstreamCa(options.trustCertificates) },
    authority: made.authority,
    env,
  };
}

/**
 * What a real upstream is checked against: Node's own store (its roots and `NODE_EXTRA_CA_CERTS`,
 * the default when undefined), plus, in tests, `networkTesting.trustCertificates`.
 */
function upstreamCa(trustCertificates: string | undefined): string[] | undefined {
  if (trustCertificates === undefined) return undefined;
  const extraFile = process.env['NODE_EXTRA_CA_CERTS'];
  let extra: string[] = [];
  try {
    extra = extraFile === undefined || extraFile === '' ? [] : [readFileSync(extraFile, 'utf8')];
  } catch {
    extra = [];
  }
  return [...rootCertificates, ...extra, trustCertificates];
}
