/**
 * The framing of a bound request through the secrets proxy, byte for byte: the proxy writes each
 * request's head anew (from what Node's server parsed) and frames its body itself, and reads each
 * answer with Node's llhttp parser over its own kept-alive connection. The real server here is a raw
 * TLS server that records every byte it gets and answers what each test scripts (a lying length, a
 * second answer nobody asked for, an answer before the body), so what crosses each way is asserted
 * exactly: no request smuggled in a body, no answer read as the next exchange's.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { NetworkNote } from '../dist/src/process/network/proxy-options.js';
import { certificatesFor } from '../dist/src/process/network/secrets/certificate-authority.js';
import { makePlaceholder } from '../dist/src/process/network/secrets/replace.js';
import { tunnelsOf } from '../dist/src/process/network/tunnel-agents.js';
import { exchange, startSecretsProxy, stopSecretsProxy } from './support/secrets-proxy.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const VALUE = 'framing-secret-value-0123456789';
const placeholder = makePlaceholder();
let root: string;
let upstream: TlsServer;
let proxy: Server;
let authority: string;
let port: number;
const notes: NetworkNote[] = [];
/** Every connection the real server took: the bytes it received, in order. */
const connections: Array<{ received: string; socket: TLSSocket }> = [];
/** What the real server answers a whole request with (given it, and its connection's number). */
let answerWith: (request: string, connection: number) => string | undefined = () => undefined;

beforeAll(async () => {
  root = await tempDir('toolhost-secrets-framing-');
  const made = await certificatesFor(['bound.test']);
  authority = made.authority;
  const leaf = made.leaves['bound.test'];
  if (leaf === undefined) throw new Error('no certificate');
  upstream = createTlsServer({ key: leaf.key, cert: leaf.certificate }, (socket) => {
    const connection = { received: '', socket };
    const number = connections.push(connection) - 1;
    let from = 0;
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      connection.received += chunk.toString('latin1');
      // One answer per whole request the connection holds past the last answered one.
      for (;;) {
        const end = wholeRequestEnd(connection.received, from);
        if (end === undefined) return;
        const answer = answerWith(connection.received.slice(from, end), number);
        from = end;
        if (answer !== undefined) socket.write(answer, 'latin1');
      }
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = (upstream.address() as AddressInfo).port;
  proxy = await startSecretsProxy({
    folder: root,
    packageName: 'framing-tools',
    net: [`bound.test:${port}`, `127.0.0.1:${port}`],
    testHosts: { 'bound.test': ['127.0.0.1'] },
    secret: { name: 'FRAMING_TOKEN', value: VALUE, placeholder, boundTo: `bound.test:${port}` },
    made,
    notes,
  });
});

afterAll(() =>
  stopSecretsProxy([proxy], async () => {
    for (const { socket } of connections) socket.destroy();
    await new Promise((resolve) => upstream.close(resolve));
    if (root !== undefined) await removeDir(root);
  }),
);

beforeEach(() => {
  notes.length = 0;
});

/** Where a whole request ends in `text` from `from` (its head, and its body by length or chunks). */
function wholeRequestEnd(text: string, from: number): number | undefined {
  const headEnd = text.indexOf('\r\n\r\n', from);
  if (headEnd < 0) return undefined;
  const head = text.slice(from, headEnd);
  const length = /\r\ncontent-length: (\d+)/i.exec(head)?.[1];
  if (/\r\ntransfer-encoding: chunked/i.test(head)) {
    // Chunk by chunk: a chunk may hold what looks like the last one.
    for (let at = headEnd + 4; ; ) {
      const lineEnd = text.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(text.slice(at, lineEnd), 16);
      if (size === 0) return text.length >= lineEnd + 4 ? lineEnd + 4 : undefined;
      at = lineEnd + 4 + size;
      if (text.length < at) return undefined;
    }
  }
  const end = headEnd + 4 + Number(length ?? 0);
  return text.length >= end ? end : undefined;
}

/** A tunnel as toolhost's agents open one to a bound host: plain HTTP to the proxy. */
async function tunnel(): Promise<Socket> {
  const { socket, tlsAtProxy } = await tunnelsOf({
    socketPath: join(root, 'proxy.sock'),
    trustCertificates: authority,
  }).open('bound.test', port, true);
  expect(tlsAtProxy).toBe(true);
  return socket;
}

/** Everything the proxy sends on `socket` after `text`, until it closes the connection. */
function untilClosed(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.once('close', () => resolve(answer));
    socket.write(text);
  });
}

/** An answer's body as the proxy framed it to the tool (chunked). */
function bodyOf(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}

const host = () => `bound.test:${port}`;

/**
 * A whole answer with `body`; `close` (the default) has the server end the connection after it, so
 * no test's kept-alive connection serves the next test.
 */
const ok = (body: string, close = true) =>
  `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n${close ? 'connection: close\r\n' : ''}\r\n${body}`;

it('writes the head once, as parsed: the value in the header and query, hop-by-hop lines gone, exactly', async () => {
  connections.length = 0;
  answerWith = () => ok('ok');
  const socket = await tunnel();
  const answer = await exchange(
    socket,
    `GET /a?key=${placeholder} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${placeholder}\r\nConnection: keep-alive\r\nProxy-Authorization: x\r\nAccept-Encoding: gzip\r\nX-Two: 1\r\nX-Two: 2\r\n\r\n`,
  );
  expect(bodyOf(answer)).toBe('2\r\nok\r\n0\r\n\r\n');
  expect(connections.map((connection) => connection.received)).toEqual([
    `GET /a?key=${VALUE} HTTP/1.1\r\nhost: ${host()}\r\nauthorization: Bearer ${VALUE}\r\nx-two: 1\r\nx-two: 2\r\naccept-encoding: identity\r\n\r\n`,
  ]);
  socket.destroy();
});

it('sends a request smuggled in a body on as body bytes: one request reaches the server, its placeholder unswapped', async () => {
  connections.length = 0;
  // Kept alive after the first, so both requests share the connection: one after the other.
  answerWith = (request) => ok('ok', !request.includes('content-length'));
  const smuggled = `GET /admin HTTP/1.1\r\nhost: ${host()}\r\nauthorization: ${placeholder}\r\n\r\n`;
  const socket = await tunnel();
  await exchange(
    socket,
    `POST /in HTTP/1.1\r\nhost: ${host()}\r\ncontent-length: ${smuggled.length}\r\n\r\n${smuggled}`,
  );
  // Chunked, with the end of the chunks inside a chunk: framed anew, the bytes the same.
  const chunkedBody = `0\r\n\r\n${smuggled}`;
  await exchange(
    socket,
    `POST /in HTTP/1.1\r\nhost: ${host()}\r\ntransfer-encoding: chunked\r\n\r\n${chunkedBody.length.toString(16)}\r\n${chunkedBody}\r\n0\r\n\r\n`,
  );
  expect(connections).toHaveLength(1);
  const [first, second] = splitRequests(connections[0]?.received ?? '');
  expect(first).toBe(
    `POST /in HTTP/1.1\r\nhost: ${host()}\r\ncontent-length: ${smuggled.length}\r\naccept-encoding: identity\r\n\r\n${smuggled}`,
  );
  const secondHead = `POST /in HTTP/1.1\r\nhost: ${host()}\r\ntransfer-encoding: chunked\r\naccept-encoding: identity\r\n\r\n`;
  expect(second?.startsWith(secondHead)).toBe(true);
  expect(dechunk(second?.slice(secondHead.length) ?? '')).toBe(chunkedBody);
  expect(connections[0]?.received).not.toContain(VALUE);
  expect(notes.some((note) => note.secret === 'FRAMING_TOKEN')).toBe(false);
  socket.destroy();
});

it('drops what an answer sends past its length: the next request gets its own answer, on a new connection', async () => {
  connections.length = 0;
  answerWith = (request, connection) =>
    connection === 0
      ? `HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged`
      : ok(request.includes('/second') ? 'second' : 'wrong!');
  const socket = await tunnel();
  const first = await exchange(socket, `GET /first HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
  expect(bodyOf(first)).toBe('5\r\nhello\r\n0\r\n\r\n');
  const second = await exchange(socket, `GET /second HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
  expect(bodyOf(second)).toBe('6\r\nsecond\r\n0\r\n\r\n');
  expect(connections.map((connection) => connection.received.split(' ', 2)[1])).toEqual([
    '/first',
    '/second',
  ]);
  socket.destroy();
});

it('cuts short an answer whose server closes before its length: the tool never reads it as whole', async () => {
  connections.length = 0;
  answerWith = (_request, connection) => {
    setImmediate(() => connections[connection]?.socket.end());
    return 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhello';
  };
  const socket = await tunnel();
  const answer = await untilClosed(socket, `GET /short HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
  expect(answer.startsWith('HTTP/1.1 200 OK')).toBe(true);
  expect(bodyOf(answer)).toBe('5\r\nhello\r\n');
  // The proxy's next tunnel is fine.
  answerWith = () => ok('ok');
  const next = await tunnel();
  expect(bodyOf(await exchange(next, `GET / HTTP/1.1\r\nhost: ${host()}\r\n\r\n`))).toBe(
    '2\r\nok\r\n0\r\n\r\n',
  );
  next.destroy();
});

it('does not use a connection again whose answer came before the whole body: the rest is never read as a request', async () => {
  connections.length = 0;
  // The server refuses on the head alone (as a 413 does), and takes no more of that request.
  answerWith = (request) => (request.startsWith('GET') ? ok('next') : undefined);
  upstream.prependOnceListener('secureConnection', (socket: TLSSocket) => {
    socket.once('data', () => socket.write('HTTP/1.1 413 Payload Too Large\r\ncontent-length: 3\r\n\r\nbig'));
  });
  const socket = await tunnel();
  const body = `GET /hidden HTTP/1.1\r\nhost: ${host()}\r\n\r\n`;
  const head = `POST /upload HTTP/1.1\r\nhost: ${host()}\r\ncontent-length: ${body.length}\r\n\r\n`;
  const refused = new Promise<string>((resolve) => {
    let answer = '';
    socket.on('data', function onData(chunk: Buffer) {
      answer += chunk.toString('latin1');
      if (answer.endsWith('\r\n0\r\n\r\n')) {
        socket.off('data', onData);
        resolve(answer);
      }
    });
  });
  socket.write(head);
  expect((await refused).startsWith('HTTP/1.1 413 Payload Too Large')).toBe(true);
  // The body comes after the answer: it goes nowhere a request could be read from.
  const next = await exchange(socket, `${body}GET /after HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
  expect(bodyOf(next)).toBe('4\r\nnext\r\n0\r\n\r\n');
  expect(connections).toHaveLength(2);
  expect(connections[0]?.received).toBe(
    `POST /upload HTTP/1.1\r\nhost: ${host()}\r\ncontent-length: ${body.length}\r\naccept-encoding: identity\r\n\r\n`,
  );
  expect(connections[1]?.received).toBe(
    `GET /after HTTP/1.1\r\nhost: ${host()}\r\naccept-encoding: identity\r\n\r\n`,
  );
  socket.destroy();
});

it('passes over a 100 Continue, reads a HEAD answer without its body, and keeps the connection', async () => {
  connections.length = 0;
  answerWith = (request) =>
    request.startsWith('HEAD')
      ? 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n'
      : `HTTP/1.1 100 Continue\r\n\r\n${ok('ok')}`;
  const socket = await tunnel();
  const head = await new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
    socket.write(`HEAD /h HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
  });
  expect(head.startsWith('HTTP/1.1 200 OK')).toBe(true);
  expect(head).toMatch(/\r\ncontent-length: 100\r\n/);
  expect(head.endsWith('\r\n\r\n')).toBe(true);
  const after = await exchange(socket, `GET /g HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
  expect(after.startsWith('HTTP/1.1 200 OK')).toBe(true);
  expect(bodyOf(after)).toBe('2\r\nok\r\n0\r\n\r\n');
  expect(connections).toHaveLength(1);
  socket.destroy();
});

it('reads an answer with more header lines than the parser hands over at once, each value swapped back', async () => {
  connections.length = 0;
  const lines = Array.from(
    { length: 40 },
    (_, index) => `x-line-${index}: ${index === 37 ? VALUE : index}\r\n`,
  );
  answerWith = () => `HTTP/1.1 200 OK\r\n${lines.join('')}connection: close\r\ncontent-length: 2\r\n\r\nok`;
  const socket = await tunnel();
  const answer = await exchange(socket, `GET / HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
  for (let index = 0; index < 40; index += 1)
    expect(answer).toContain(`\r\nx-line-${index}: ${index === 37 ? placeholder : index}\r\n`);
  expect(answer).not.toContain(VALUE);
  socket.destroy();
});

it('answers 502 for an answer that is not HTTP, or switches protocols unasked, and the next request is fine', async () => {
  for (const bad of [
    'HTTP/1.1 200 OK\r\nx-bad: a\x01b\r\ncontent-length: 2\r\n\r\nok',
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: evil\r\n\r\nraw bytes',
  ]) {
    connections.length = 0;
    answerWith = () => bad;
    const socket = await tunnel();
    const answer = await exchange(socket, `GET / HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
    expect(answer.startsWith('HTTP/1.1 502 Bad Gateway')).toBe(true);
    expect(answer).toContain(`could not reach ${host()}`);
    expect(answer).not.toContain('raw bytes');
    answerWith = () => ok('ok');
    const next = await exchange(socket, `GET / HTTP/1.1\r\nhost: ${host()}\r\n\r\n`);
    expect(bodyOf(next)).toBe('2\r\nok\r\n0\r\n\r\n');
    socket.destroy();
  }
});

/** The requests in what one connection received, each whole. */
function splitRequests(text: string): string[] {
  const requests: string[] = [];
  for (let from = 0; from < text.length; ) {
    const end = wholeRequestEnd(text, from);
    if (end === undefined) break;
    requests.push(text.slice(from, end));
    from = end;
  }
  return requests;
}

/** A chunked body's bytes (the chunks' framing checked as it is read). */
function dechunk(text: string): string {
  let body = '';
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    const size = Number.parseInt(text.slice(at, lineEnd), 16);
    if (size === 0) {
      expect(text.slice(lineEnd)).toBe('\r\n\r\n');
      return body;
    }
    body += text.slice(lineEnd + 2, lineEnd + 2 + size);
    expect(text.slice(lineEnd + 2 + size, lineEnd + 4 + size)).toBe('\r\n');
    at = lineEnd + 4 + size;
  }
}
