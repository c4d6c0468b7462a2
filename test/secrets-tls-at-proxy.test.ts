/**
 * toolhost's own agents leave a bound host's TLS to the egress proxy: their `CONNECT` offers it
 * (tunnel-agents.ts), the proxy takes the offer for a host a secret is bound to only, and the tool's
 * plain HTTP on the sandbox's private socket goes upstream over the one TLS the proxy makes. Here the
 * proxy runs with no sandbox around it and the agents' tunnels are opened as a package process opens
 * them: what is tested is who does the TLS, and that the rules of a terminated tunnel still hold.
 */

import type { IncomingMessage, Server } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createSecureContext, connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { NetworkNote } from '../dist/src/process/network/proxy-options.js';
import { certificatesFor } from '../dist/src/process/network/secrets/certificate-authority.js';
import { makePlaceholder } from '../dist/src/process/network/secrets/replace.js';
import { tunnelsOf } from '../dist/src/process/network/tunnel-agents.js';
import { exchange, startSecretsProxy, stopSecretsProxy } from './support/secrets-proxy.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const VALUE = 'tls-at-proxy-value-0123456789';
const placeholder = makePlaceholder();
let root: string;
let upstream: Server;
let proxy: Server;
let authority: string;
let port: number;
/** TLS handshakes the real server completed. */
let handshakes = 0;
const notes: NetworkNote[] = [];
const arrived: Array<{
  host: string | undefined;
  authorization: string | undefined;
  url: string | undefined;
}> = [];

beforeAll(async () => {
  root = await tempDir('toolhost-secrets-tls-at-proxy-');
  // One CA for the proxy's certificates and the real server's (which the proxy is told to trust).
  const made = await certificatesFor(['bound.test', 'free.test']);
  authority = made.authority;
  const leaf = made.leaves['bound.test'];
  const freeLeaf = made.leaves['free.test'];
  if (leaf === undefined || freeLeaf === undefined) throw new Error('no certificates');
  const freeContext = createSecureContext({ key: freeLeaf.key, cert: freeLeaf.certificate });
  upstream = createHttpsServer(
    {
      key: leaf.key,
      cert: leaf.certificate,
      SNICallback: (name, callback) => callback(null, name === 'free.test' ? freeContext : undefined),
    },
    (req, res) => {
      arrived.push({ host: req.headers.host, authorization: req.headers.authorization, url: req.url });
      req.resume();
      res.end(`echo ${req.headers.authorization ?? ''}`);
    },
  );
  upstream.on('secureConnection', () => {
    handshakes += 1;
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = (upstream.address() as AddressInfo).port;
  proxy = await startSecretsProxy({
    folder: root,
    packageName: 'tls-tools',
    net: [`bound.test:${port}`, `free.test:${port}`, `127.0.0.1:${port}`],
    testHosts: { 'bound.test': ['127.0.0.1'], 'free.test': ['127.0.0.1'] },
    secret: { name: 'BOUND_TOKEN', value: VALUE, placeholder, boundTo: `bound.test:${port}` },
    made,
    notes,
  });
});

afterAll(() =>
  stopSecretsProxy([proxy, upstream], async () => {
    if (root !== undefined) await removeDir(root);
  }),
);

beforeEach(() => {
  arrived.length = 0;
  notes.length = 0;
});

const open = () => tunnelsOf({ socketPath: join(root, 'proxy.sock'), trustCertificates: authority }).open;

it('a bound host takes the offer: plain HTTP to the proxy, the value upstream, one TLS in all, kept alive', async () => {
  const before = handshakes;
  const { socket, tlsAtProxy } = await open()('bound.test', port, true);
  expect(tlsAtProxy).toBe(true);
  // Plain HTTP on the tunnel: with the proxy's TLS terminated here it would be a TLS record.
  for (const round of [1, 2, 3]) {
    const answer = await exchange(
      socket,
      `GET /data?key=${placeholder}&round=${round} HTTP/1.1\r\nhost: bound.test:${port}\r\nauthorization: Bearer ${placeholder}\r\n\r\n`,
    );
    expect(answer.startsWith('HTTP/1.1 200 OK')).toBe(true);
    // The echoed value comes back as the placeholder.
    expect(answer).toContain(`echo Bearer ${placeholder}\r\n`);
    expect(answer).not.toContain(VALUE);
  }
  expect(arrived).toEqual(
    [1, 2, 3].map((round) => ({
      host: `bound.test:${port}`,
      authorization: `Bearer ${VALUE}`,
      url: `/data?key=${VALUE}&round=${round}`,
    })),
  );
  // The proxy's kept-alive upstream connection (at most one new handshake, and only that one).
  expect(handshakes - before).toBeLessThanOrEqual(1);
  socket.destroy();
});

it('an unbound host leaves the offer unanswered: the tool does its own TLS, end to end, nothing swapped', async () => {
  const { socket, tlsAtProxy } = await open()('free.test', port, true);
  expect(tlsAtProxy).toBe(false);
  // Plain HTTP in that tunnel reaches the TLS server as it is: the proxy neither reads nor answers it.
  const raw = await new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.once('close', () => resolve(text));
    socket.write(`GET / HTTP/1.1\r\nhost: free.test:${port}\r\nauthorization: ${placeholder}\r\n\r\n`);
  });
  expect(raw).not.toMatch(/^HTTP\/1\.1 200/);
  expect(arrived).toEqual([]);
  // Over the tool's own TLS it arrives, placeholder and all (and the stray placeholder is told of
  // only where the proxy can read it: not in a TLS tunnel).
  const tunnelled = await open()('free.test', port, true);
  const answer = await new Promise<IncomingMessage>((resolve, reject) => {
    const sent = httpsRequest(
      {
        host: 'free.test',
        port,
        path: '/',
        headers: { authorization: placeholder },
        servername: 'free.test',
        ca: [authority],
        createConnection: () =>
          tlsConnect({ socket: tunnelled.socket, servername: 'free.test', ca: [authority] }),
      },
      resolve,
    );
    sent.once('error', reject);
    sent.end();
  });
  answer.resume();
  expect(answer.statusCode).toBe(200);
  expect(arrived).toEqual([{ host: `free.test:${port}`, authorization: placeholder, url: '/' }]);
  tunnelled.socket.destroy();
});

it('a Host header that names another host than the tunnel is refused (421): nothing reaches it', async () => {
  const { socket, tlsAtProxy } = await open()('bound.test', port, true);
  expect(tlsAtProxy).toBe(true);
  const answer = await exchange(
    socket,
    `GET /data HTTP/1.1\r\nhost: free.test:${port}\r\nauthorization: Bearer ${placeholder}\r\n\r\n`,
  );
  expect(answer.startsWith('HTTP/1.1 421 Misdirected Request')).toBe(true);
  expect(answer).toContain('names another host ("free.test:');
  expect(arrived).toEqual([]);
  expect(notes.some((note) => !note.allowed && note.reason?.includes('names another host') === true)).toBe(
    true,
  );
  socket.destroy();
  // The next tunnel is fine.
  const next = await open()('bound.test', port, true);
  const right = await exchange(
    next.socket,
    `GET /data HTTP/1.1\r\nhost: bound.test:${port}\r\nauthorization: ${placeholder}\r\n\r\n`,
  );
  expect(right.startsWith('HTTP/1.1 200 OK')).toBe(true);
  expect(arrived).toEqual([{ host: `bound.test:${port}`, authorization: VALUE, url: '/data' }]);
  next.socket.destroy();
});

it('without the offer, a bound host is intercepted as before: the TLS in the tunnel is the proxy certificate', async () => {
  const { socket, tlsAtProxy } = await open()('bound.test', port, false);
  expect(tlsAtProxy).toBe(false);
  const secure = tlsConnect({ socket, servername: 'bound.test', ca: [authority] });
  await new Promise<void>((resolve, reject) => {
    secure.once('secureConnect', resolve);
    secure.once('error', reject);
  });
  const answer = await exchange(
    secure as unknown as Socket,
    `GET /data HTTP/1.1\r\nhost: bound.test:${port}\r\nauthorization: ${placeholder}\r\n\r\n`,
  );
  expect(answer.startsWith('HTTP/1.1 200 OK')).toBe(true);
  expect(arrived).toEqual([{ host: `bound.test:${port}`, authorization: VALUE, url: '/data' }]);
  secure.destroy();
});

it('a raw CONNECT that offers with another value is not taken up', async () => {
  const socket = connect({ path: join(root, 'proxy.sock') });
  const head = await new Promise<string>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
    socket.write(
      `CONNECT bound.test:${port} HTTP/1.1\r\nhost: bound.test:${port}\r\nx-toolhost-tls-at-proxy: yes\r\n\r\n`,
    );
  });
  expect(head).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
  socket.destroy();
});

it('an absolute-form https request is refused (400) for a bound host and an unbound one: the offer is the only way in', async () => {
  for (const name of ['bound.test', 'free.test']) {
    const socket = connect({ path: join(root, 'proxy.sock') });
    const answer = await exchange(
      socket,
      `GET https://${name}:${port}/data HTTP/1.1\r\nhost: ${name}:${port}\r\nauthorization: ${placeholder}\r\n\r\n`,
    );
    expect(answer.startsWith('HTTP/1.1 400 Bad Request')).toBe(true);
    expect(answer).toContain('forwards only absolute http: requests');
    socket.destroy();
  }
  expect(arrived).toEqual([]);
});
