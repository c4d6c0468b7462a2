/**
 * An answer from a bound host that streams (server-sent events, a long download) through the
 * secrets proxy: each part reaches the tool while the server still holds the rest, with the value
 * swapped back to the placeholder, a value split across the server's writes included. The server
 * writes its next part only once the client has read the last, so a proxy that held an answer back
 * (to search it whole, or to send it in one write) would never finish. The proxy runs here, with no
 * sandbox around it: what is tested is its streaming.
 */
import type { IncomingMessage, Server } from 'node:http';
import { createServer, request } from 'node:https';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NetworkNote } from '../dist/src/process/network/proxy-options.js';
import { certificatesFor } from '../dist/src/process/network/secrets/certificate-authority.js';
import { makePlaceholder } from '../dist/src/process/network/secrets/replace.js';
import { startSecretsProxy, stopSecretsProxy } from './support/secrets-proxy.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const VALUE = 'stream-secret-value-0123456789';
const placeholder = makePlaceholder();
let root: string;
let upstream: Server;
let proxy: Server;
let authority: string;
let port: number;
const notes: NetworkNote[] = [];
/** What the server received, and its next part to write once the test says so. */
const arrived: Array<{ authorization: string | undefined }> = [];
let writeNext: Array<() => void> = [];

beforeAll(async () => {
  root = await tempDir('toolhost-secrets-stream-');
  const made = await certificatesFor(['stream.test']);
  authority = made.authority;
  const leaf = made.leaves['stream.test'];
  if (leaf === undefined) throw new Error('no certificate for stream.test');
  // The real server: a certificate from the same CA, which the proxy is told to trust.
  upstream = createServer({ key: leaf.key, cert: leaf.certificate }, (req, res) => {
    arrived.push({ authorization: req.headers.authorization });
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const parts = [
      `data: first ${VALUE}\n\n`,
      `data: split ${VALUE.slice(0, 12)}`,
      `${VALUE.slice(12)}\n\n`,
      `data: last ${VALUE}\n\n`,
    ];
    const next = () => {
      const part = parts.shift();
      if (part === undefined) res.end();
      else {
        res.write(part);
        writeNext.push(next);
      }
    };
    next();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = (upstream.address() as AddressInfo).port;
  proxy = await startSecretsProxy({
    folder: root,
    packageName: 'stream-tools',
    net: [`stream.test:${port}`, `127.0.0.1:${port}`],
    testHosts: { 'stream.test': ['127.0.0.1'] },
    secret: { name: 'STREAM_TOKEN', value: VALUE, placeholder, boundTo: `stream.test:${port}` },
    made,
    notes,
  });
});

afterAll(() =>
  stopSecretsProxy([proxy, upstream], async () => {
    if (root !== undefined) await removeDir(root);
  }),
);

/** A TLS connection to `stream.test` through the proxy's tunnel, as a package process's agents open it. */
function tunnel(): Promise<ReturnType<typeof tlsConnect>> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: join(root, 'proxy.sock') });
    socket.once('error', reject);
    socket.once('connect', () =>
      socket.write(`CONNECT stream.test:${port} HTTP/1.1\r\nhost: stream.test:${port}\r\n\r\n`),
    );
    socket.once('data', (answer: Buffer) => {
      if (!answer.toString('latin1').startsWith('HTTP/1.1 200')) {
        reject(new Error(answer.toString('latin1')));
        return;
      }
      const secure = tlsConnect({ socket, servername: 'stream.test', ca: [authority] });
      secure.once('secureConnect', () => resolve(secure));
      secure.once('error', reject);
    });
  });
}

it('each part of a streamed answer reaches the tool before the server writes the next, the value swapped back', async () => {
  const secure = await tunnel();
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const sent = request(
      {
        host: 'stream.test',
        port,
        path: '/events',
        headers: { authorization: `Bearer ${placeholder}` },
        createConnection: () => secure,
      },
      resolve,
    );
    sent.once('error', reject);
    sent.end();
  });
  expect(response.statusCode).toBe(200);
  let seen = '';
  const expected = [
    `data: first ${placeholder}\n\n`,
    // The end of a write that could begin the value waits for the next: then it is the placeholder.
    'data: split ',
    `${placeholder}\n\n`,
    `data: last ${placeholder}\n\n`,
  ];
  let want = expected.shift() ?? '';
  await new Promise<void>((resolve, reject) => {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      seen += chunk;
      // The part the server wrote is here whole: it may write the next.
      while (want !== '' && seen.endsWith(want)) {
        want = expected.shift() ?? '';
        const next = writeNext;
        writeNext = [];
        for (const write of next) write();
      }
    });
    response.once('end', resolve);
    response.once('error', reject);
  });
  expect(seen).toBe(
    `data: first ${placeholder}\n\ndata: split ${placeholder}\n\ndata: last ${placeholder}\n\n`,
  );
  expect(seen).not.toContain(VALUE);
  expect(arrived).toEqual([{ authorization: `Bearer ${VALUE}` }]);
  expect(notes.filter((note) => note.secret !== undefined || !note.allowed)).toEqual([]);
  secure.destroy();
});
