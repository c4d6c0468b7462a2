/**
 * Bytes per call through a package's egress proxy (the process tier in bubblewrap, held to hosts):
 * a call that downloads or uploads more than `maxNetworkBytesPerCall`, through a tunnel (HTTP and
 * HTTPS) or as a plain-HTTP request the proxy forwards, answers `TOOL_ACCESS_DENIED` naming the
 * limit, with a `network` event counted in `status()`; the next call has a budget of its own, and
 * another package is untouched. (How bytes are charged, and what is refused between calls, is in
 * egress-budget.test.ts, on the proxy itself.)
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type NetworkEvent, outcomeText, ToolHost, type ToolOutcome } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { useEgressServers } from './support/egress-servers.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const BYTES_TOOLS = fileURLToPath(new URL('../fixtures/network/bytes/tools', import.meta.url));
const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const { sandbox } = await processEnvironment();

const BUDGET = 1024 * 1024;
const servers = useEgressServers();
const { ports } = servers;
let root: string;
let host: ToolHost;
const events: NetworkEvent[] = [];

async function writeBytesTools(folder: string): Promise<string> {
  await cp(BYTES_TOOLS, join(folder, 'tools'), { recursive: true });
  const net = [ports.http, ports.https].flatMap((port) => [`api.weather.test:${port}`, `127.0.0.1:${port}`]);
  const manifest = {
    name: 'bytes-tools',
    type: 'module',
    toolhost: {
      tools: ['download.js', 'upload.js'].map((file) => `./tools/${file}`),
      permissions: { net },
    },
  };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return folder;
}

beforeAll(async () => {
  if (!sandbox.available) return;
  root = await tempDir('toolhost-egress-bytes-');
  host = new ToolHost({
    dataDir: join(root, 'data'),
    isolation: 'process',
    logger: recordingLogger(),
    allowNetwork: { 'bytes-tools': true, 'strict-hostile': true },
    maxNetworkBytesPerCall: BUDGET,
    networkTesting: { hosts: { 'api.weather.test': ['127.0.0.1'] }, trustCertificates: servers.certificate },
  });
  host.on('network', (event) => events.push(event));
  for (const path of [await writeBytesTools(join(root, 'bytes-tools')), HOSTILE]) {
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

const OVER = {
  code: 'TOOL_ACCESS_DENIED',
  message: `the process isolation tier closed the network connections of package bytes-tools: the call moved more than ${BUDGET} bytes (maxNetworkBytesPerCall)`,
};
const under = Math.floor(BUDGET * 0.75);
const over = BUDGET * 3;

/** After a call over its budget: calls under it work, twice (each has its own), and so does another package. */
async function stillFine(url: string, via: Via) {
  expect(await call('bytes_download', { url: `${url}/bytes?n=${under}`, via })).toBe(`200 ${under}`);
  expect(await call('bytes_upload', { url: `${url}/upload`, size: under, via })).toBe(
    `200 received ${under}`,
  );
  expect(await call('strict_tmp_roundtrip', {})).toBe('kept in tmpDir');
}

type Via = 'fetch' | 'forward';
const WAYS: Array<[string, 'http' | 'https', Via]> = [
  ['a tunnel over HTTP', 'http', 'fetch'],
  ['a tunnel over HTTPS', 'https', 'fetch'],
  ['a forwarded plain-HTTP request', 'http', 'forward'],
];
const base = (scheme: 'http' | 'https') => `${scheme}://api.weather.test:${ports[scheme]}`;

describe("isolation: 'process' in bubblewrap, bytes per call through the egress proxy", () => {
  it.each(WAYS)(
    'calls under the budget through %s, one after another, each have a budget of their own',
    async (_, scheme, via) => {
      const url = base(scheme);
      for (let index = 0; index < 3; index += 1) {
        expect(await call('bytes_download', { url: `${url}/bytes?n=${under}`, via })).toBe(`200 ${under}`);
      }
    },
  );

  it.each(WAYS)(
    'a download over the budget through %s answers the limit by name, and the next calls work',
    async (_, scheme, via) => {
      const url = base(scheme);
      const before = events.length;
      expect(await call('bytes_download', { url: `${url}/bytes?n=${over}`, via })).toEqual(OVER);
      const cut = events.slice(before).filter((event) => event.bytes !== undefined);
      expect(cut).toEqual([
        expect.objectContaining({
          packageName: 'bytes-tools',
          host: '',
          port: 0,
          allowed: false,
          reason: `a call of package bytes-tools moved more than ${BUDGET} bytes (maxNetworkBytesPerCall)`,
        }),
      ]);
      expect(cut[0]?.bytes).toBeGreaterThan(BUDGET);
      await stillFine(url, via);
    },
  );

  it.each(WAYS)(
    'an upload over the budget through %s answers the limit by name, and the next calls work',
    async (_, scheme, via) => {
      const url = base(scheme);
      expect(await call('bytes_upload', { url: `${url}/upload`, size: over, via })).toEqual(OVER);
      await stillFine(url, via);
    },
  );

  it('each cut is counted in status() apart from the refusals', () => {
    const cuts = events.filter((event) => event.bytes !== undefined).length;
    const refused = events.filter((event) => !event.allowed && event.bytes === undefined).length;
    expect(cuts).toBe(6);
    const status = host.status().find((module) => module.name === 'bytes_download');
    expect(status?.network).toEqual({
      allowed: events.filter((event) => event.allowed).length,
      refused,
      overBudget: cuts,
    });
  });
});
