/**
 * The process tier and the network: where bubblewrap sandboxes a package's process it has a network
 * namespace of its own (only its own loopback) unless its manifest asks for the network and the
 * host's `allowNetwork` grants it; then it has the host's. Every attempt goes to servers of this test
 * on 127.0.0.1, which count what reaches them. Without bubblewrap the tier does not contain the
 * network (process-no-sandbox.test.ts).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost, type ToolHostOptions, type ToolOutcome } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { type RecordingLogger, recordingLogger } from './support/host-harness.js';
import { useLocalServers } from './support/local-servers.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const NETWORKED = fileURLToPath(new URL('../fixtures/strict/networked', import.meta.url));
const { sandbox } = await processEnvironment();

const servers = useLocalServers();
const { reached } = servers;

let root: string;
let host: ToolHost | undefined;
let logger: RecordingLogger;

beforeEach(async ({ skip }) => {
  skip(!sandbox.available, sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`);
  root = await tempDir('toolhost-process-network-');
  reached.requests.length = 0;
  reached.connections = 0;
  logger = recordingLogger();
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  if (root !== undefined) await removeDir(root);
});

async function processHost(options: ToolHostOptions, ...packages: string[]): Promise<ToolHost> {
  host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'process', logger, ...options });
  for (const path of packages) {
    const report = await host.load(path);
    expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
  }
  return host;
}

async function tryTheNetwork(tools: { fetch: string; socket: string }) {
  const fetched = await host?.call(tools.fetch, { url: servers.httpUrl });
  const socket = await host?.call(tools.socket, { port: servers.tcpPort });
  // An error's code and message (where the tool threw is another suite's concern).
  const failure = (outcome: ToolOutcome | undefined) => ({
    code: outcome?.error?.code,
    message: outcome?.error?.message,
  });
  return {
    fetch: fetched?.isError ? failure(fetched) : outcomeText(fetched ?? { content: [], isError: true }),
    socket: socket?.isError ? failure(socket) : outcomeText(socket ?? { content: [], isError: true }),
  };
}

const UNASKED = { fetch: 'strict_fetch', socket: 'strict_open_socket' };
const ASKED = { fetch: 'net_fetch', socket: 'net_open_socket' };
/**
 * The sandbox's own loopback has nothing listening: the connection fails there, and is answered as
 * the tier's refusal, naming where it went and what grants it.
 */
const refused = (packageName: string, why: 'not-asked' | 'not-granted') => {
  const denied = (where: string) => {
    const grant = `--allow-network ${packageName}=${where} (the allowNetwork option: { "${packageName}": ["${where}"] })`;
    const hint =
      why === 'not-granted'
        ? `package ${packageName} asks for the network and is not granted it; grant it with ${grant}`
        : `package ${packageName} asks for no network; once its package.json asks for the host ("toolhost": { "permissions": { "net": ["${where}"] } }), grant it with ${grant}`;
    return {
      code: 'TOOL_ACCESS_DENIED',
      message: `the process isolation tier refused network access to ${where} (no network is granted to this package: ${hint})`,
    };
  };
  return {
    fetch: denied(`127.0.0.1:${new URL(servers.httpUrl).port}`),
    socket: denied(`127.0.0.1:${servers.tcpPort}`),
  };
};
const GOT_THROUGH = { fetch: 'reached the http server', socket: 'reached the tcp server' };

describe("isolation: 'process' in bubblewrap and the network", () => {
  it('a tool of a package that did not ask gets TOOL_ACCESS_DENIED naming host:port and the grant, for a fetch and a raw socket, and nothing reaches the servers', async () => {
    await processHost({ allowNetwork: true }, HOSTILE);
    expect(await tryTheNetwork(UNASKED)).toEqual(refused('strict-hostile', 'not-asked'));
    expect(reached).toEqual({ requests: [], connections: 0 });
    expect(
      outcomeText((await host?.call('strict_tmp_roundtrip', {})) ?? { content: [], isError: true }),
    ).toBe('kept in tmpDir');
  });

  it('a package that asked gets the network when allowNetwork names it; one beside it that did not ask still has none', async () => {
    await processHost({ allowNetwork: ['strict-networked', 'strict-hostile'] }, NETWORKED, HOSTILE);
    expect(await tryTheNetwork(ASKED)).toEqual(GOT_THROUGH);
    expect(await tryTheNetwork(UNASKED)).toEqual(refused('strict-hostile', 'not-asked'));
    expect(reached).toEqual({ requests: ['/exfiltrate'], connections: 1 });
  });

  it('a package that asked gets no network by default, and the host says why once', async () => {
    await processHost({}, NETWORKED);
    expect(await tryTheNetwork(ASKED)).toEqual(refused('strict-networked', 'not-granted'));
    await tryTheNetwork(ASKED);
    expect(reached).toEqual({ requests: [], connections: 0 });
    expect(logger.matching('warn', 'asks for the network')).toEqual([
      'strict-networked asks for the network ("permissions": { "net": true }) and `allowNetwork` does not grant it: its process has none where bubblewrap sandboxes it',
    ]);
  });
});
