/**
 * Per-host egress in the process tier with bubblewrap: a package whose manifest lists hosts, and
 * whose grant is a subset of them, reaches exactly those through its proxy, by `fetch`, `http.get`,
 * `https.get` and undici's `request`; everything else (another host, a raw socket, loopback, cloud
 * metadata, a name that resolves to a private or loopback address, a redirect to a refused host, an
 * agent of the tool's own) is refused with a sentence naming the host and the rule, or has no route.
 * Names resolve from the host's test table (`networkTesting.hosts`); every server is on 127.0.0.1.
 * One host serves the whole catalogue, so each refusal is also followed by calls that still work.
 */
import { cp, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type NetworkEvent, outcomeText, ToolHost, type ToolOutcome } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { useEgressServers } from './support/egress-servers.js';
import { type RecordingLogger, recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const EGRESS_TOOLS = fileURLToPath(new URL('../fixtures/network/egress/tools', import.meta.url));
const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const UNDICI = dirname(fileURLToPath(import.meta.resolve('undici')));
const { sandbox } = await processEnvironment();

const servers = useEgressServers();
const { reached, ports } = servers;
let root: string;
let host: ToolHost;
let logger: RecordingLogger;
const events: NetworkEvent[] = [];

const TEST_HOSTS = {
  'api.weather.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'intranet.test': ['10.1.2.3'],
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:127.0.0.1'],
};

/** A weather-tools package whose manifest asks for the test's hosts, with undici as its dependency. */
async function writeWeatherTools(folder: string): Promise<string> {
  await cp(EGRESS_TOOLS, join(folder, 'tools'), { recursive: true });
  await cp(UNDICI, join(folder, 'node_modules', 'undici'), { recursive: true });
  const manifest = {
    name: 'weather-tools',
    type: 'module',
    // Declared: a snapshot holds only the dependencies a package declares.
    dependencies: { undici: '*' },
    toolhost: {
      tools: [
        'fetch.js',
        'node-get.js',
        'undici-request.js',
        'raw-socket.js',
        'own-agent.js',
        'raw-proxy.js',
      ].map((file) => `./tools/${file}`),
      permissions: { net: [...granted(), `other.test:${ports.other}`] },
    },
  };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return folder;
}

/** What the host grants: all the manifest asks for but other.test. */
function granted(): string[] {
  return [
    `api.weather.test:${ports.http}`,
    `api.weather.test:${ports.https}`,
    // The grant names the address the API is on: a name resolving to it is let through.
    `127.0.0.1:${ports.http}`,
    `127.0.0.1:${ports.https}`,
    `intranet.test:${ports.http}`,
    'metadata.test',
    `mapped.test:${ports.other}`,
  ];
}

beforeAll(async () => {
  if (!sandbox.available) return;
  root = await tempDir('toolhost-process-egress-');
  logger = recordingLogger();
  host = new ToolHost({
    dataDir: join(root, 'data'),
    isolation: 'process',
    logger,
    allowNetwork: { 'weather-tools': granted(), 'strict-hostile': true },
    networkTesting: { hosts: TEST_HOSTS, trustCertificates: servers.certificate },
  });
  host.on('network', (event) => events.push(event));
  for (const path of [await writeWeatherTools(join(root, 'weather-tools')), HOSTILE]) {
    const report = await host.load(path);
    expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
  }
});

afterAll(async () => {
  await host?.close();
  if (root !== undefined) await removeDir(root);
});

beforeEach(({ skip }) => {
  skip(!sandbox.available, sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`);
});

async function call(name: string, args: Record<string, unknown>) {
  const outcome = (await host.call(name, args)) as ToolOutcome;
  return outcome.isError
    ? { code: outcome.error?.code, message: outcome.error?.message }
    : outcomeText(outcome);
}

const refusal = (target: string, rule: string) => ({
  code: 'TOOL_ACCESS_DENIED',
  message: `the process isolation tier refused network access to ${target} (${rule})`,
});
const NOT_GRANTED = 'not granted to package weather-tools';
const unnamed = (name: string, address: string, kind: string) =>
  `${name} resolves to ${address}, ${kind}, which package weather-tools's grant does not name`;

/** The next call after a refusal: the granted API still answers, and so does another package. */
async function stillFine() {
  expect(await call('egress_fetch', { url: `http://api.weather.test:${ports.http}/after` })).toBe(
    '200 api says /after',
  );
  expect(await call('strict_tmp_roundtrip', {})).toBe('kept in tmpDir');
}

describe("isolation: 'process' in bubblewrap, held to a list of hosts", () => {
  it('the granted API answers through fetch, http.get, https.get and undici, over HTTP and HTTPS', async () => {
    const http = `http://api.weather.test:${ports.http}`;
    const https = `https://api.weather.test:${ports.https}`;
    expect(await call('egress_fetch', { url: `${http}/fetch` })).toBe('200 api says /fetch');
    expect(await call('egress_fetch', { url: `${https}/fetch-tls` })).toBe('200 api says /fetch-tls');
    expect(await call('egress_node_get', { url: `${http}/get` })).toBe('200 api says /get');
    expect(await call('egress_node_get', { url: `${https}/get-tls` })).toBe('200 api says /get-tls');
    expect(await call('egress_undici_request', { url: `${http}/undici` })).toBe('200 api says /undici');
    expect(await call('egress_undici_request', { url: `${https}/undici-tls` })).toBe(
      '200 api says /undici-tls',
    );
    expect(reached.api).toEqual(['/fetch', '/fetch-tls', '/get', '/get-tls', '/undici', '/undici-tls']);
  });

  it.each([['egress_fetch'], ['egress_node_get'], ['egress_undici_request']])(
    'another host, asked for but not granted, is refused by name through %s and never reached',
    async (tool) => {
      expect(await call(tool, { url: `http://other.test:${ports.other}/stolen` })).toEqual(
        refusal(`other.test:${ports.other}`, NOT_GRANTED),
      );
      expect(reached.other).toEqual([]);
      await stillFine();
    },
  );

  it("the host's loopback services are refused by address and unreachable by a raw socket or an agent of the tool's own", async () => {
    expect(await call('egress_fetch', { url: `http://127.0.0.1:${ports.tcp}/` })).toEqual(
      refusal(`127.0.0.1:${ports.tcp}`, NOT_GRANTED),
    );
    expect(await call('egress_fetch', { url: `http://[::1]:${ports.tcp}/` })).toEqual(
      refusal(`[::1]:${ports.tcp}`, NOT_GRANTED),
    );
    expect(await call('egress_fetch', { url: `http://localhost:${ports.http}/` })).toEqual(
      refusal(`localhost:${ports.http}`, NOT_GRANTED),
    );
    // The sandbox's network namespace has its own loopback, with nothing listening.
    expect(await call('egress_raw_socket', { host: '127.0.0.1', port: ports.tcp })).toEqual({
      code: 'TOOL_THREW',
      message: `connect ECONNREFUSED 127.0.0.1:${ports.tcp}`,
    });
    expect(await call('egress_own_agent', { url: `http://127.0.0.1:${ports.http}/own-agent` })).toEqual({
      code: 'TOOL_THREW',
      message: `connect ECONNREFUSED 127.0.0.1:${ports.http}`,
    });
    const byName = await call('egress_raw_socket', { host: 'api.weather.test', port: ports.http });
    expect(byName).toMatchObject({ code: 'TOOL_THREW' });
    expect(reached.loopback).toBe(0);
    expect(reached.api).not.toContain('/own-agent');
    await stillFine();
  });

  it('cloud metadata addresses are refused, named directly or through a granted name', async () => {
    expect(await call('egress_fetch', { url: 'http://169.254.169.254/latest/meta-data/' })).toEqual(
      refusal('169.254.169.254:80', NOT_GRANTED),
    );
    expect(await call('egress_fetch', { url: 'http://[fd00:ec2::254]/latest/meta-data/' })).toEqual(
      refusal('[fd00:ec2::254]:80', NOT_GRANTED),
    );
    expect(await call('egress_fetch', { url: 'http://metadata.test/latest/meta-data/' })).toEqual(
      refusal('metadata.test:80', unnamed('metadata.test', '169.254.169.254', 'a cloud metadata address')),
    );
    await stillFine();
  });

  it('a granted name that resolves to a private or a loopback address is refused', async () => {
    expect(await call('egress_fetch', { url: `http://intranet.test:${ports.http}/` })).toEqual(
      refusal(`intranet.test:${ports.http}`, unnamed('intranet.test', '10.1.2.3', 'a private address')),
    );
    expect(await call('egress_node_get', { url: `http://mapped.test:${ports.other}/` })).toEqual(
      refusal(`mapped.test:${ports.other}`, unnamed('mapped.test', '::ffff:127.0.0.1', 'a loopback address')),
    );
    expect(reached.other).toEqual([]);
    await stillFine();
  });

  it('a redirect from the granted API to a refused host is refused when it is followed', async () => {
    const to = encodeURIComponent(`http://other.test:${ports.other}/stolen`);
    expect(
      await call('egress_fetch', { url: `http://api.weather.test:${ports.http}/redirect?to=${to}` }),
    ).toEqual(refusal(`other.test:${ports.other}`, NOT_GRANTED));
    expect(reached.other).toEqual([]);
    await stillFine();
  });

  it('a tool that speaks to its proxy directly gets the same refusals, and malformed or oversized requests are refused', async () => {
    const raw = (request: string) => call('egress_raw_proxy', { request });
    const forbidden = (target: string, rule: string) =>
      `HTTP/1.1 403 Forbidden | the process isolation tier refused network access to ${target} (${rule})`;
    expect(await raw(`CONNECT other.test:${ports.other} HTTP/1.1\r\n\r\n`)).toBe(
      forbidden(`other.test:${ports.other}`, NOT_GRANTED),
    );
    // The decimal spelling of 127.0.0.1 is a name no rule grants.
    expect(await raw(`CONNECT 2130706433:${ports.http} HTTP/1.1\r\n\r\n`)).toBe(
      forbidden(`2130706433:${ports.http}`, NOT_GRANTED),
    );
    expect(
      await raw(
        `GET http://127.0.0.1:${ports.tcp}/ HTTP/1.1\r\nhost: api.weather.test:${ports.http}\r\n\r\n`,
      ),
    ).toBe(forbidden(`127.0.0.1:${ports.tcp}`, NOT_GRANTED));
    expect(await raw(`GET /relative HTTP/1.1\r\nhost: api.weather.test\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400 /);
    expect(await raw('\u0000\u0001 not http\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    expect(await raw(`GET http://api.weather.test/ HTTP/1.1\r\nx-big: ${'a'.repeat(100_000)}\r\n\r\n`)).toBe(
      'HTTP/1.1 431 Request Header Fields Too Large | the process isolation tier refused a request whose head is over 16 KiB',
    );
    expect(await call('egress_raw_proxy', { hold: 33 })).toBe(
      'HTTP/1.1 503 Service Unavailable | the process isolation tier refused a network connection (package weather-tools already has 32 open, the most it may)',
    );
    expect(reached.other).toEqual([]);
    expect(reached.loopback).toBe(0);
    await stillFine();
  });

  it('every connection is a network event with its package, host, port and reason, counted in status()', async () => {
    const allowed = events.filter((event) => event.allowed);
    const refused = events.filter((event) => !event.allowed);
    expect(allowed[0]).toMatchObject({
      packageName: 'weather-tools',
      host: 'api.weather.test',
      port: ports.http,
      allowed: true,
      address: '127.0.0.1',
    });
    expect(refused).toContainEqual(
      expect.objectContaining({ host: 'other.test', port: ports.other, allowed: false, reason: NOT_GRANTED }),
    );
    const status = host.status().find((module) => module.name === 'egress_fetch');
    expect(status?.network).toEqual({ allowed: allowed.length, refused: refused.length, overBudget: 0 });
    expect(host.status().find((module) => module.name === 'strict_tmp_roundtrip')?.network).toBeUndefined();
  });
});
