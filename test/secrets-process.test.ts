import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type NetworkEvent, outcomeText, ToolHost, type ToolOutcome } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { type RecordingLogger, recordingLogger } from './support/host-harness.js';
import { useSecretServers, writeSecretTools } from './support/secret-servers.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const { sandbox } = await processEnvironment();

const API_TOKEN = 'ghp_real-value-0123456789abcdefghijklmnop';
const OTHER_TOKEN = 'other-real-value-9876543210';
const TEST_HOSTS = {
  'api.secret.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'plain.secret.test': ['127.0.0.1'],
  // Bound, and failing: nothing listens on 127.0.0.2, and the server's certificate does not name it.
  'down.secret.test': ['127.0.0.2'],
  'wrong-name.test': ['127.0.0.1'],
};

const servers = useSecretServers();
const { received, ports } = servers;
let root: string;
let host: ToolHost;
let logger: RecordingLogger;
const events: NetworkEvent[] = [];

beforeAll(async () => {
  if (!sandbox.available) return;
  root = await tempDir('toolhost-secrets-');
  logger = recordingLogger();
  host = new ToolHost({
    dataDir: join(root, 'data'),
    isolation: 'process',
    logger,
    allowNetwork: { 'secret-tools': true },
    secrets: { API_TOKEN, OTHER_TOKEN },
    networkTesting: { hosts: TEST_HOSTS, trustCertificates: servers.authority },
  });
  host.on('network', (event) => events.push(event));
  const report = await host.load(
    await writeSecretTools(join(root, 'secret-tools'), ports, {
      apiHosts: [`down.secret.test:${ports.https}`, `wrong-name.test:${ports.https}`],
      net: [`127.0.0.2:${ports.https}`],
    }),
  );
  expect(report.modules.map((module) => [module.state, module.reason])).toEqual(
    Array(4).fill(['offered', undefined]),
  );
});

afterAll(async () => {
  await host?.close();
  if (root !== undefined) await removeDir(root);
});

beforeEach(({ skip }) => {
  skip(!sandbox.available, sandbox.available ? '' : `no OS sandbox here: ${sandbox.reason}`);
  received.length = 0;
  events.length = 0;
});

/**
 * The `network` events matching `predicate`, once there are `count` of them: the proxy's thread
 * reports on its own line to the host, which may come after the call's answer.
 */
function reported(predicate: (event: NetworkEvent) => boolean, count = 1): Promise<NetworkEvent[]> {
  return new Promise((resolve) => {
    const check = () => {
      const found = events.filter(predicate);
      if (found.length < count) return;
      host.off('network', check);
      resolve(found);
    };
    host.on('network', check);
    check();
  });
}

type Answer = {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  error?: string;
  /** Node's client: whether the tool's own connection carried TLS. */
  tlsInProcess?: boolean;
};

async function request(args: Record<string, unknown>): Promise<{ answers: Answer[]; outcome: ToolOutcome }> {
  const outcome = (await host.call('secret_request', args)) as ToolOutcome;
  expect(outcome.isError, JSON.stringify(outcome)).toBe(false);
  return { answers: JSON.parse(outcomeText(outcome)) as Answer[], outcome };
}

/** The placeholder the tools see (read through the leak tool). */
async function placeholder(name: string): Promise<string> {
  const outcome = (await host.call('secret_leak', { name })) as ToolOutcome;
  return outcomeText(outcome).replace(/^seen: /, '');
}

const api = (path: string) => `https://api.secret.test:${ports.https}${path}`;
const expectNoValue = (value: unknown) => {
  const text = JSON.stringify(value);
  expect(text).not.toContain(API_TOKEN);
  expect(text).not.toContain(OTHER_TOKEN);
};

describe('what the tool sees', () => {
  it('reads, prints, returns and puts into details only a placeholder, never the value', async () => {
    const outcome = (await host.call('secret_leak', { name: 'API_TOKEN' })) as ToolOutcome;
    expect(outcomeText(outcome)).toMatch(/^seen: toolhost-secret-[A-Za-z0-9_-]{32}$/);
    expect((outcome.details as { value: string }).value).toBe(outcomeText(outcome).slice('seen: '.length));
    expectNoValue(outcome);
    expectNoValue(logger.lines);
    // Each secret its own placeholder.
    expect(await placeholder('OTHER_TOKEN')).not.toBe(await placeholder('API_TOKEN'));
    // A secret the manifest doesn't bind is absent.
    expect(outcomeText((await host.call('secret_leak', { name: 'UNBOUND' })) as ToolOutcome)).toBe(
      'seen: null',
    );
  });
});

describe.each(['fetch', 'node', 'undici'])('a request to the bound host by %s', (client) => {
  it('arrives with the value in its headers and query, and its echo comes back with the placeholder', async () => {
    const { answers, outcome } = await request({
      client,
      url: api('/echo?key={{API_TOKEN}}&plain=1'),
      headers: {
        authorization: 'Bearer {{API_TOKEN}}',
        'x-api-key': '{{API_TOKEN}}',
        cookie: 'session={{API_TOKEN}}',
      },
    });
    expect(received).toHaveLength(1);
    const [arrived] = received;
    expect(arrived?.headers.authorization).toBe(`Bearer ${API_TOKEN}`);
    expect(arrived?.headers['x-api-key']).toBe(API_TOKEN);
    expect(arrived?.headers.cookie).toBe(`session=${API_TOKEN}`);
    expect(arrived?.url).toBe(`/echo?key=${API_TOKEN}&plain=1`);
    const mark = await placeholder('API_TOKEN');
    const answer = answers[0] as Answer;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body ?? '{}').headers.authorization).toBe(`Bearer ${mark}`);
    expect(answer.headers?.['x-echo-authorization']).toBe(`Bearer ${mark}`);
    expectNoValue(outcome);
    expect(
      events.filter((event) => event.secret !== undefined).map((event) => event.reason),
      JSON.stringify(events),
    ).toEqual([]);
  });
});

describe('where the value does not go', () => {
  it('a placeholder in the path or body of the bound host goes on as it is', async () => {
    const mark = await placeholder('API_TOKEN');
    await request({ client: 'node', url: api('/echo/{{API_TOKEN}}'), body: 'token={{API_TOKEN}}' });
    expect(received[0]?.url).toBe(`/echo/${mark}`);
    expect(received[0]?.body).toBe(`token=${mark}`);
  });

  it('a placeholder sent to another granted host over plain HTTP, in a header, the path or the body, arrives unreplaced and is reported', async () => {
    const mark = await placeholder('API_TOKEN');
    const { answers } = await request({
      client: 'node',
      url: `http://other.test:${ports.http}/steal/{{API_TOKEN}}`,
      headers: { authorization: 'Bearer {{API_TOKEN}}' },
      body: '{{API_TOKEN}}',
    });
    expect(answers[0]?.status).toBe(200);
    expect(received[0]?.headers.authorization).toBe(`Bearer ${mark}`);
    expect(received[0]?.url).toBe(`/steal/${mark}`);
    expect(received[0]?.body).toBe(mark);
    expectNoValue(received);
    // Node's agents send plain HTTP in a tunnel too: the proxy watches what passes, changing
    // nothing, and reports each of the three.
    const seen = await reported((event) => event.secret === 'API_TOKEN', 3);
    expect(seen.map((event) => event.reason)).toEqual(
      Array(3).fill(
        `the placeholder of secret API_TOKEN was sent to other.test:${ports.http} in a tunnel, where it is not bound: it went unreplaced`,
      ),
    );
    expect(seen.every((event) => event.host === 'other.test')).toBe(true);
  });

  it('a placeholder sent over TLS to a host bound to another secret arrives unreplaced, and is reported', async () => {
    const mark = await placeholder('API_TOKEN');
    await request({
      client: 'fetch',
      url: `https://other.test:${ports.https}/echo?q={{API_TOKEN}}`,
      headers: { authorization: 'Bearer {{API_TOKEN}}', 'x-other': '{{OTHER_TOKEN}}' },
    });
    expect(received[0]?.headers.authorization).toBe(`Bearer ${mark}`);
    expect(received[0]?.url).toBe(`/echo?q=${mark}`);
    // The secret bound there is swapped in.
    expect(received[0]?.headers['x-other']).toBe(OTHER_TOKEN);
    const seen = await reported((event) => event.secret === 'API_TOKEN', 2);
    expect(seen.map((event) => event.reason)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('in the query'),
        expect.stringContaining('in header authorization'),
      ]),
    );
  });

  it('plain HTTP to the bound host is refused; a binding written http:// lets it through, swapped', async () => {
    const { answers } = await request({
      client: 'node',
      url: `http://api.secret.test:${ports.http}/echo`,
      headers: { authorization: '{{API_TOKEN}}' },
    });
    expect(answers[0]?.status, JSON.stringify(answers)).toBe(403);
    expect(answers[0]?.body).toContain('secret API_TOKEN is bound to it, and goes there over TLS only');
    expect(received).toEqual([]);
    await request({
      client: 'node',
      url: `http://plain.secret.test:${ports.http}/echo`,
      headers: { authorization: '{{API_TOKEN}}' },
    });
    expect(received[0]?.headers.authorization).toBe(API_TOKEN);
  });

  it('a Host header the tool writes never reaches a bound host: another name is refused, a second Host line dropped', async () => {
    const forged = await request({
      client: 'node',
      url: `http://plain.secret.test:${ports.http}/echo`,
      headers: { host: 'other-tenant.test', authorization: '{{API_TOKEN}}' },
    });
    expect(forged.answers[0]?.status, JSON.stringify(forged)).toBe(421);
    expect(received).toEqual([]);
    // A second Host line in the tunnel, after the right one, is dropped too.
    const authority = `api.secret.test:${ports.https}`;
    const answer = await host.call('secret_raw_tls', {
      authority,
      servername: 'api.secret.test',
      request: `GET /echo HTTP/1.1\r\nhost: ${authority}\r\nhost: other-tenant.test\r\nauthorization: {{API_TOKEN}}\r\n\r\n`,
    });
    expect(outcomeText(answer as ToolOutcome)).toBe('HTTP/1.1 200 OK');
    const hostLines = (received[0]?.rawHeaders ?? []).filter(
      (_, index, raw) => index % 2 === 1 && raw[index - 1]?.toLowerCase() === 'host',
    );
    expect(hostLines).toEqual([authority]);
    expect(received[0]?.headers.authorization).toBe(API_TOKEN);
  });

  it('TLS in the tunnel to the bound host that names another server (SNI) is refused: nothing reaches it', async () => {
    const { answers } = await request({
      client: 'node',
      url: api('/echo'),
      servername: 'other.test',
      headers: { authorization: '{{API_TOKEN}}' },
    });
    expect(answers[0]?.error).toBeDefined();
    expect(received).toEqual([]);
    await reported((event) => event.reason?.includes('named "other.test"') === true);
    // The next request is fine.
    await request({ client: 'node', url: api('/echo'), headers: { authorization: '{{API_TOKEN}}' } });
    expect(received[0]?.headers.authorization).toBe(API_TOKEN);
  });

  it('a request in the tunnel whose Host header names another host is refused (421), nothing swapped', async () => {
    // Node's https and undici both take the TLS server name from a Host header: raw TLS it is.
    const authority = `api.secret.test:${ports.https}`;
    const answer = await host.call('secret_raw_tls', {
      authority,
      servername: 'api.secret.test',
      request: `GET /echo HTTP/1.1\r\nhost: other.test:${ports.https}\r\nauthorization: {{API_TOKEN}}\r\n\r\n`,
    });
    expect(outcomeText(answer as ToolOutcome)).toBe('HTTP/1.1 421 Misdirected Request');
    expect(received).toEqual([]);
    // The same, with the tunnel's host: swapped.
    const right = await host.call('secret_raw_tls', {
      authority,
      servername: 'api.secret.test',
      request: `GET /echo HTTP/1.1\r\nhost: ${authority}\r\nauthorization: {{API_TOKEN}}\r\n\r\n`,
    });
    expect(outcomeText(right as ToolOutcome)).toBe('HTTP/1.1 200 OK');
    expect(received[0]?.headers.authorization).toBe(API_TOKEN);
  });
});

describe('a WebSocket upgrade', () => {
  it('carrying a placeholder to another granted host arrives unreplaced, and is reported', async () => {
    const mark = await placeholder('API_TOKEN');
    const answer = await host.call('secret_upgrade', {
      url: `http://other.test:${ports.http}/socket`,
      headers: { authorization: 'Bearer {{API_TOKEN}}' },
    });
    expect(outcomeText(answer as ToolOutcome)).toBe('upgraded');
    expect(received[0]?.headers.authorization).toBe(`Bearer ${mark}`);
    const seen = await reported((event) => event.secret === 'API_TOKEN');
    expect(seen[0]?.host).toBe('other.test');
  });

  it('to the bound host is refused (501): nothing is swapped past a protocol switch', async () => {
    const answer = await host.call('secret_upgrade', {
      url: api('/socket'),
      headers: { authorization: 'Bearer {{API_TOKEN}}' },
    });
    expect(outcomeText(answer as ToolOutcome)).toMatch(
      /^501 the process isolation tier does not relay a protocol upgrade/,
    );
    expect(received).toEqual([]);
  });
});

describe('connections', () => {
  it('kept alive and chunked: every request is swapped, over at most one new TLS connection upstream', async () => {
    const before = servers.tlsConnections;
    const { answers } = await request({
      client: 'node',
      url: api('/echo?key={{API_TOKEN}}'),
      headers: { authorization: 'Bearer {{API_TOKEN}}' },
      chunks: ['first {{API_TOKEN}} ', 'second'],
      repeat: 3,
    });
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(received.map((request) => request.headers.authorization)).toEqual(
      Array(3).fill(`Bearer ${API_TOKEN}`),
    );
    expect(received.map((request) => request.headers['transfer-encoding'])).toEqual(Array(3).fill('chunked'));
    const mark = await placeholder('API_TOKEN');
    expect(received.map((request) => request.body)).toEqual(Array(3).fill(`first ${mark} second`));
    // The proxy keeps its upstream connection alive too (one made by an earlier test may serve).
    expect(servers.tlsConnections - before).toBeLessThanOrEqual(1);
  });

  it("through toolhost's agents, the tool's https to the bound host carries no TLS of its own: the proxy's upstream TLS is the only one", async () => {
    const before = servers.tlsConnections;
    const { answers } = await request({
      client: 'node',
      url: api('/echo'),
      headers: { authorization: 'Bearer {{API_TOKEN}}' },
      repeat: 2,
    });
    expect(answers.map((answer) => [answer.status, answer.tlsInProcess])).toEqual([
      [200, false],
      [200, false],
    ]);
    expect(received.map((request) => request.headers.authorization)).toEqual(
      Array(2).fill(`Bearer ${API_TOKEN}`),
    );
    expect(servers.tlsConnections - before).toBeLessThanOrEqual(1);
  });
});

describe('a bound host that fails', () => {
  it.each([
    [
      'is unreachable',
      'down',
      /^the process isolation tier could not reach down\.secret\.test:\d+ at 127\.0\.0\.2 \(ECONNREFUSED\)$/,
    ],
    [
      'presents a certificate that does not verify',
      'wrong-name',
      /^the process isolation tier did not send the request to wrong-name\.test:\d+: its certificate did not verify against the host's trust store \(ERR_TLS_CERT_ALTNAME_INVALID\); a private CA goes in the host process's NODE_EXTRA_CA_CERTS$/,
    ],
  ])(
    '%s: the tool reads a 502 that says why, an event says so, and the next request is fine',
    async (_, name, why) => {
      const url = `https://${name === 'down' ? 'down.secret.test' : 'wrong-name.test'}:${ports.https}/echo`;
      const { answers, outcome } = await request({
        client: 'node',
        url,
        headers: { authorization: 'Bearer {{API_TOKEN}}' },
        repeat: 2,
      });
      // Both requests on the kept-alive connection to the proxy: each answered, neither sent.
      expect(answers.map((answer) => answer.status)).toEqual([502, 502]);
      expect(answers[0]?.body).toMatch(why);
      expect(received).toEqual([]);
      expectNoValue(outcome);
      const [event] = await reported((event) => event.allowed === false && why.test(event.reason ?? ''));
      expect(event?.host).toBe(name === 'down' ? 'down.secret.test' : 'wrong-name.test');
      expectNoValue(events);
      await request({
        client: 'fetch',
        url: api('/echo'),
        headers: { authorization: 'Bearer {{API_TOKEN}}' },
      });
      expect(received[0]?.headers.authorization).toBe(`Bearer ${API_TOKEN}`);
    },
  );
});
