/**
 * Strict isolation and the network. Node 25 added the network to the permission model
 * (`--allow-net`): there a strict worker has none unless its package asks for it in its manifest
 * (`"toolhost": { "permissions": { "net": true } }`) and the host's `allowNetwork` allows it. Every
 * attempt goes to servers of this test on 127.0.0.1, which count what reaches them. Before Node 25
 * these tests skip (strict can't deny the network there: `strict-limits.test.ts` shows it), and the
 * host says so once.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { strictTierGaps } from '../dist/src/calls/isolation.js';
import { outcomeText, ToolHost, type ToolHostOptions } from '../dist/src/index.js';
import { accessDenied } from '../dist/workers/guard/access-denied.js';
import { type RecordingLogger, recordingLogger } from './support/host-harness.js';
import { useLocalServers } from './support/local-servers.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));
const NETWORKED = fileURLToPath(new URL('../fixtures/strict/networked', import.meta.url));
const NODE_DENIES_NETWORK = process.allowedNodeEnvironmentFlags.has('--allow-net');
const NEEDS_NODE_25 = `Node ${process.version}'s permission model has no network permission (Node 25 and later have --allow-net)`;

const servers = useLocalServers();
const { reached } = servers;

let root: string;
let host: ToolHost | undefined;
let logger: RecordingLogger;

beforeEach(async () => {
  root = await tempDir('toolhost-strict-network-');
  reached.requests.length = 0;
  reached.connections = 0;
  logger = recordingLogger();
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  await removeDir(root);
});

async function strictHost(options: ToolHostOptions, ...packages: string[]): Promise<ToolHost> {
  host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'strict', logger, ...options });
  for (const path of packages) {
    const report = await host.load(path);
    expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
  }
  return host;
}

/** Both ways out: a `fetch` and a raw socket. Each outcome is its text, or its error. */
async function tryTheNetwork(tools: { fetch: string; socket: string }) {
  const fetched = await host?.call(tools.fetch, { url: servers.httpUrl });
  const socket = await host?.call(tools.socket, { port: servers.tcpPort });
  return {
    fetch: fetched?.isError ? fetched.error : outcomeText(fetched ?? { content: [], isError: true }),
    socket: socket?.isError ? socket.error : outcomeText(socket ?? { content: [], isError: true }),
  };
}

const UNASKED = { fetch: 'strict_fetch', socket: 'strict_open_socket' };
const ASKED = { fetch: 'net_fetch', socket: 'net_open_socket' };
const refusedConnect = (port: number) => ({
  code: 'TOOL_ACCESS_DENIED',
  message: `the strict isolation tier refused Net (connect 127.0.0.1:${port})`,
});
const GOT_THROUGH = { fetch: 'reached the http server', socket: 'reached the tcp server' };

describe("isolation: 'strict' and the network (Node 25 and later)", () => {
  it('a tool of a package that did not ask gets an error result for a fetch and for a raw socket, and nothing reaches the servers', async ({
    skip,
  }) => {
    skip(!NODE_DENIES_NETWORK, NEEDS_NODE_25);
    // Allowing every package that asks grants nothing to one that didn't ask.
    await strictHost({ allowNetwork: true }, HOSTILE);
    const { port } = new URL(servers.httpUrl);

    expect(await tryTheNetwork(UNASKED)).toEqual({
      fetch: refusedConnect(Number(port)),
      socket: refusedConnect(servers.tcpPort),
    });
    expect(reached).toEqual({ requests: [], connections: 0 });
    const next = await host?.call('strict_tmp_roundtrip', {});
    expect(next && outcomeText(next)).toBe('kept in tmpDir');
  });

  it('a package that asked gets the network when allowNetwork is true', async ({ skip }) => {
    skip(!NODE_DENIES_NETWORK, NEEDS_NODE_25);
    await strictHost({ allowNetwork: true }, NETWORKED);
    expect(await tryTheNetwork(ASKED)).toEqual(GOT_THROUGH);
    expect(reached).toEqual({ requests: ['/exfiltrate'], connections: 1 });
  });

  it('a package that asked gets the network when allowNetwork names it, and one beside it that did not ask still gets none', async ({
    skip,
  }) => {
    skip(!NODE_DENIES_NETWORK, NEEDS_NODE_25);
    await strictHost({ allowNetwork: ['strict-networked', 'strict-hostile'] }, NETWORKED, HOSTILE);
    expect(await tryTheNetwork(ASKED)).toEqual(GOT_THROUGH);
    expect((await tryTheNetwork(UNASKED)).socket).toEqual(refusedConnect(servers.tcpPort));
    expect(reached).toEqual({ requests: ['/exfiltrate'], connections: 1 });
  });

  it.for<[string, ToolHostOptions]>([
    ['by default', {}],
    ['with allowNetwork: false', { allowNetwork: false }],
    ['when allowNetwork names other packages', { allowNetwork: ['weather-tools'] }],
  ])('a package that asked gets no network %s, and the host says why once', async ([, options], { skip }) => {
    skip(!NODE_DENIES_NETWORK, NEEDS_NODE_25);
    await strictHost(options, NETWORKED);
    const { port } = new URL(servers.httpUrl);

    expect(await tryTheNetwork(ASKED)).toEqual({
      fetch: refusedConnect(Number(port)),
      socket: refusedConnect(servers.tcpPort),
    });
    expect(reached).toEqual({ requests: [], connections: 0 });
    expect(logger.matching('warn', 'asks for the network')).toEqual([
      'strict-networked asks for the network ("permissions": { "net": true }) and `allowNetwork` does not grant it: its strict workers have none',
    ]);
  });

  it('a package that stops asking loses the network when it is loaded again', async ({ skip }) => {
    skip(!NODE_DENIES_NETWORK, NEEDS_NODE_25);
    const copy = join(root, 'networked');
    await cp(NETWORKED, copy, { recursive: true });
    await strictHost({ allowNetwork: true }, copy);
    expect((await tryTheNetwork(ASKED)).socket).toBe('reached the tcp server');

    const manifest = JSON.parse(await readFile(join(copy, 'package.json'), 'utf8'));
    delete manifest.toolhost.permissions;
    await writeFile(join(copy, 'package.json'), JSON.stringify(manifest));
    await host?.load(copy);

    expect((await tryTheNetwork(ASKED)).socket).toEqual(refusedConnect(servers.tcpPort));
    expect(reached.connections).toBe(1);
  });
});

describe('what strict cannot contain on this Node', () => {
  it('the host says it once, when strict is first used, however many packages and calls follow', async () => {
    await strictHost({}, HOSTILE, NETWORKED);
    await host?.call('strict_tmp_roundtrip', {});
    await host?.call('strict_tmp_roundtrip', {});
    const gaps = strictTierGaps();
    expect(gaps.length > 0).toBe(
      !NODE_DENIES_NETWORK || gaps.some((gap) => gap.includes('working directory')),
    );
    expect(logger.matching('warn', 'strict isolation on Node')).toEqual(
      gaps.length === 0
        ? []
        : [
            `strict isolation on Node ${process.version} does not contain ${gaps.join(', nor ')}; see the table of what each tier contains in docs/isolation.md`,
          ],
    );
  });

  it('before Node 25 the notice names the network', ({ skip }) => {
    skip(NODE_DENIES_NETWORK, `Node ${process.version} can deny the network`);
    expect(strictTierGaps()).toContain('the network (Node 25 and later deny it)');
  });

  it('a host that uses only the worker tier says nothing about strict', async () => {
    host = new ToolHost({ isolation: 'worker', dataDir: join(root, 'data'), logger });
    await host.load(HOSTILE);
    await host.call('strict_tmp_roundtrip', {});
    expect(logger.matching('warn', 'strict isolation')).toEqual([]);
  });
});

describe('how a refusal reads', () => {
  it('a refused connect is named through the errors that wrap it, and an error whose fields throw is an ordinary throw', () => {
    const refused = Object.assign(
      new Error('connect ERR_ACCESS_DENIED Access to this API has been restricted'),
      {
        code: 'ERR_ACCESS_DENIED',
        syscall: 'connect',
        address: '10.0.0.1',
        port: 443,
      },
    );
    expect(accessDenied(new TypeError('fetch failed', { cause: refused }))).toEqual({
      code: 'TOOL_ACCESS_DENIED',
      message: 'the strict isolation tier refused Net (connect 10.0.0.1:443)',
    });
    const lookup = { code: 'ERR_ACCESS_DENIED', syscall: 'getaddrinfo', hostname: 'example.com' };
    expect(accessDenied(lookup)?.message).toBe(
      'the strict isolation tier refused Net (getaddrinfo example.com)',
    );
    const hostile = {
      get code() {
        throw new Error('gotcha');
      },
    };
    expect(accessDenied(hostile)).toBeUndefined();
    expect(accessDenied(Object.assign(new Error('EACCES'), { code: 'EACCES' }))).toBeUndefined();
  });
});
