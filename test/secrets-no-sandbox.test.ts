/**
 * Secrets in the process tier where there is no OS sandbox (bubblewrap hidden from the host's PATH,
 * as in process-no-sandbox.test.ts): its processes run under Node's permission model, which refuses
 * them their egress proxy's socket, so a package that binds a granted secret is left out, saying so.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LoadReport, ToolHost } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { recordingLogger } from './support/host-harness.js';
import { useSecretServers, writeSecretTools } from './support/secret-servers.js';
import { removeDir, tempDir } from './support/tool-packages.js';

process.env['PATH'] = '';
const environment = await processEnvironment();
const API_TOKEN = 'no-sandbox-real-value-42';
const servers = useSecretServers();
let root: string;
let host: ToolHost;
let report: LoadReport | undefined;

beforeAll(async () => {
  root = await tempDir('toolhost-secrets-no-sandbox-');
  host = new ToolHost({
    dataDir: join(root, 'data'),
    isolation: 'process',
    logger: recordingLogger(),
    allowNetwork: { 'secret-tools': true },
    secrets: { API_TOKEN },
    networkTesting: {
      hosts: { 'api.secret.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] },
      trustCertificates: servers.authority,
    },
  });
  report = await host.load(await writeSecretTools(join(root, 'secret-tools'), servers.ports));
});

afterAll(async () => {
  await host?.close();
  if (root !== undefined) await removeDir(root);
});

it('a package that binds a granted secret is left out, saying the tier swaps secrets only in a sandbox', async () => {
  expect(environment.sandbox.available).toBe(false);
  expect(report?.modules.map((module) => module.code)).toEqual(Array(4).fill('SECRETS_REFUSED'));
  expect(report?.modules[0]?.reason).toBe(
    'package secret-tools binds secrets, which the process isolation tier swaps in through its egress proxy only inside an OS sandbox (bubblewrap), and there is none here; see docs/isolation.md',
  );
  expect(JSON.stringify(report)).not.toContain(API_TOKEN);
});
