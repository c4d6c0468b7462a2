/**
 * The network and secrets of sandboxed MCP servers, on one host: a Node server (fixtures/mcp-servers/
 * fetch-api.mjs) reaches the hosts its entry's `net` names through its own egress proxy, and nothing
 * else (a refusal is an error result and a `network` event; the host lives, the next call is fine);
 * a server that is not Node (the same fixture behind `sh`, calling curl) reaches them through
 * `HTTPS_PROXY`. A secret bound in `toolhost.secrets` reaches the API (a local HTTPS server with a CA
 * of the test's own) as its value, while the server's environment and every result hold only the
 * placeholder. Bad bindings leave their server out with the reason, the others fine.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NetworkEvent, ToolOutcome } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { findOnPath } from '../dist/src/process/sandbox/sandbox.js';
import { fixtureEntry, mcpServerFile, writeServersConfig } from './support/mcp-server-fixtures.js';
import { useSecretServers } from './support/secret-servers.js';
import { textOf, useServersHost } from './support/servers-host.js';

const { sandbox } = await processEnvironment();
/** The way out of a server that is not Node is tried with curl (.ci/run installs it). */
const curlMissing = findOnPath('curl') === undefined;

const API_TOKEN = 'api-real-value-0123456789abcdefghijkl';
/** Each call's bytes through a server's proxy: a few KB of echo fits, a 12 KB query echoed back doesn't. */
const MAX_CALL_BYTES = 16 * 1024;
const TEST_HOSTS = {
  'api.secret.test': ['127.0.0.1'],
  'plain.secret.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
};

describe('MCP servers with network grants and secret bindings', () => {
  const api = useSecretServers();
  const { received, ports } = api;
  const testing = { hosts: TEST_HOSTS, trustCertificates: '' };
  // The CA is made in the API's beforeAll, which runs before the host's.
  const servers = useServersHost({
    secrets: { API_TOKEN },
    maxNetworkBytesPerCall: MAX_CALL_BYTES,
    get networkTesting() {
      return { ...testing, trustCertificates: api.authority };
    },
  });
  const events: NetworkEvent[] = [];
  let config: string;

  beforeAll(async () => {
    if (!sandbox.available) return;
    const apiBase = `https://api.secret.test:${ports.https}`;
    const net = [
      `api.secret.test:${ports.https}`,
      `plain.secret.test:${ports.http}`,
      // The names resolve to loopback, which the proxy refuses unless the grant names the address.
      `127.0.0.1:${ports.https}`,
      `127.0.0.1:${ports.http}`,
    ];
    const secrets = { API_TOKEN: [`api.secret.test:${ports.https}`] };
    config = await writeServersConfig(servers.folder, {
      honest: fixtureEntry('honest'),
      api: {
        command: process.execPath,
        args: [mcpServerFile('fetch-api'), apiBase],
        toolhost: { net, secrets, prefix: 'node' },
      },
      // Not Node: sh starts the fixture, so its way out is HTTPS_PROXY (curl reads it).
      curl: {
        command: '/bin/sh',
        args: ['-c', 'exec "$0" "$@"', process.execPath, mcpServerFile('fetch-api'), apiBase],
        toolhost: { net, secrets, prefix: 'curl' },
      },
      // Any host: still through its proxy, which refuses loopback and private addresses unless named.
      any: {
        command: process.execPath,
        args: [mcpServerFile('fetch-api'), apiBase],
        // A secret the host grants no value: absent from its environment.
        toolhost: { net: true, secrets: { NOT_GRANTED: ['api.secret.test'] }, prefix: 'any' },
      },
      unbound: fixtureEntry('fetch-api', {
        toolhost: { net, secrets: { API_TOKEN: ['other.test'] }, prefix: 'unbound' },
      }),
      badName: fixtureEntry('fetch-api', {
        toolhost: { net, secrets: { '1_TOKEN': net }, prefix: 'badname' },
      }),
      clash: fixtureEntry('fetch-api', {
        env: { API_TOKEN: 'from the config' },
        toolhost: { net, secrets, prefix: 'clash' },
      }),
    });
    servers.host.on('network', (event) => events.push(event));
    const report = await servers.host.load(config);
    const states = Object.fromEntries(
      report.modules.map((module) => [module.path.slice(module.path.indexOf('#') + 1), module.state]),
    );
    expect(states).toMatchObject({ 'api/api_fetch': 'offered', 'curl/api_curl': 'offered' });
  });

  beforeEach(({ skip }) => {
    skip(!sandbox.available, sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`);
    received.length = 0;
  });

  /** The `network` events matching `accept`, once one is there (the proxy's thread reports on its own line). */
  function reported(accept: (event: NetworkEvent) => boolean): Promise<NetworkEvent> {
    return new Promise((resolve) => {
      const check = () => {
        const found = events.find(accept);
        if (found === undefined) return;
        servers.host.off('network', check);
        resolve(found);
      };
      servers.host.on('network', check);
      check();
    });
  }

  const plainUrl = (path: string) => `http://plain.secret.test:${ports.http}${path}`;

  it('leaves out each bad binding with its reason, and runs the others', () => {
    const reason = (name: string) => servers.statusOf(`${config}#${name}`)?.reason;
    expect(reason('unbound')).toBe(
      'unbound: "toolhost.secrets" is refused: secret API_TOKEN is bound to "other.test", a host the server does not ask the network for (add it to "net")',
    );
    expect(reason('badName')).toMatch(
      /^badName: "toolhost\.secrets" is refused: "1_TOKEN" is not a secret name/,
    );
    expect(reason('clash')).toBe(
      'clash: secret API_TOKEN is bound in "toolhost.secrets" and also set by "env", which would hand the server its value: remove it from there',
    );
  });

  describe.each([
    ['a Node server, through its agents (fetch)', 'node_api_fetch', 'api'],
    ['a Node server, through its agents (node:http and node:https)', 'node_api_node_http', 'api'],
    ['a server that is not Node, through HTTPS_PROXY', 'curl_api_curl', 'curl'],
  ])('%s', (_title, tool, server) => {
    beforeEach(({ skip }) =>
      skip(server === 'curl' && curlMissing, 'curl is not installed here (apt-get install curl)'),
    );

    it('reaches a granted host', async () => {
      const outcome = await servers.call(tool, { url: plainUrl('/granted') });
      expect(textOf(outcome)).toBe('200: ok');
      expect(received.map((request) => request.url)).toEqual(['/granted']);
      const event = await reported((item) => item.allowed && item.host === 'plain.secret.test');
      expect(event).toMatchObject({ port: ports.http, address: '127.0.0.1' });
    });

    it('is refused a host it was not granted: an error result, a network event, and the next call is fine', async () => {
      const before = events.length;
      const outcome = await servers.call(tool, { url: `http://other.test:${ports.http}/stolen` });
      expect(outcome.isError).toBe(true);
      expect(textOf(outcome)).toContain('refused network access to other.test');
      const event = await reported(
        (item) => events.indexOf(item) >= before && !item.allowed && item.host === 'other.test',
      );
      // Named as a package's are: the server by its name, the config as its source (status counts it).
      expect(event).toMatchObject({ packageName: server, source: config, port: ports.http });
      expect(event.reason).toBe(`not granted to MCP server ${server}`);
      expect(
        servers.statusOf(`${config}#${server}/${tool.replace(/^[a-z]+_/, '')}`)?.network?.refused,
      ).toBeGreaterThan(0);
      expect(received).toEqual([]);
      expect(textOf(await servers.call(tool, { url: plainUrl('/after') }))).toBe('200: ok');
      await servers.honestFine();
    });

    it('sends the secret’s value to its bound host, and sees only the placeholder', async () => {
      const outcome = await servers.call(tool, { path: '/echo', secret: 'API_TOKEN' });
      expect(outcome.isError, JSON.stringify(outcome)).toBe(false);
      expect(received.map((request) => request.headers.authorization)).toEqual([`Bearer ${API_TOKEN}`]);
      const placeholder = textOf(
        await servers.call(tool.replace(/api_\w+$/, 'read_env'), { name: 'API_TOKEN' }),
      );
      expect(placeholder).toMatch(/^toolhost-secret-[A-Za-z0-9_-]{32}$/);
      // The API echoed the value: it came back into the sandbox as the placeholder.
      expect(textOf(outcome)).toContain(`Bearer ${placeholder}`);
      expect(JSON.stringify(servers.outcomes)).not.toContain(API_TOKEN);
    });
  });

  it('answers a call that moves more than maxNetworkBytesPerCall TOOL_ACCESS_DENIED, and the next call is fine', async () => {
    const outcome = await servers.call('node_api_fetch', {
      url: plainUrl(`/echo?pad=${'x'.repeat(12_000)}`),
    });
    expect(outcome.error).toMatchObject({ code: 'TOOL_ACCESS_DENIED' });
    expect(textOf(outcome)).toBe(
      `the process isolation tier closed the network connections of MCP server api: the call moved more than ${MAX_CALL_BYTES} bytes (maxNetworkBytesPerCall)`,
    );
    expect(textOf(await servers.call('node_api_fetch', { url: plainUrl('/after') }))).toBe('200: ok');
    await servers.honestFine();
  });

  it('gives `net: true` any host through its proxy, which refuses a loopback address as for packages', async () => {
    const outcome = await servers.call('any_api_fetch', { url: plainUrl('/loopback') });
    expect(textOf(outcome)).toBe(
      `fetch failed: the process isolation tier refused network access to plain.secret.test:${ports.http} (plain.secret.test resolves to 127.0.0.1, a loopback address, which MCP server any's grant does not name)`,
    );
    expect(outcome.isError).toBe(true);
    await reported((item) => item.packageName === 'any' && !item.allowed);
    expect(received).toEqual([]);
  });

  it('sends the placeholder unreplaced to a granted host the secret is not bound to, and says so in an event', async () => {
    const outcome = await servers.call('node_api_fetch', { url: plainUrl('/echo'), secret: 'API_TOKEN' });
    expect(outcome.isError).toBe(false);
    const placeholder = textOf(await servers.call('node_read_env', { name: 'API_TOKEN' }));
    expect(received.map((request) => request.headers.authorization)).toEqual([`Bearer ${placeholder}`]);
    const event = await reported((item) => item.secret === 'API_TOKEN' && item.host === 'plain.secret.test');
    expect(event).toMatchObject({ packageName: 'api', port: ports.http });
    expect(JSON.stringify(servers.outcomes)).not.toContain(API_TOKEN);
  });

  it('leaves a secret the host grants no value out of the server’s environment', async () => {
    expect(textOf(await servers.call('any_read_env', { name: 'NOT_GRANTED' }))).toBe('absent');
  });

  it('gives each server its own placeholder', async () => {
    const node = textOf(await servers.call('node_read_env', { name: 'API_TOKEN' }));
    const curl = textOf(await servers.call('curl_read_env', { name: 'API_TOKEN' }));
    expect(node).not.toBe(curl);
    expect(JSON.stringify(servers.outcomes satisfies ToolOutcome[])).not.toContain(API_TOKEN);
  });
});
