/**
 * The framing of a bound request through the secrets proxy, byte for byte: the proxy writes each
 * request's head anew (from what Node's server parsed) and frames its body itself, and reads each
 * answer with Node's llhttp parser over its own kept-alive connection. The real server here is a raw
 * TLS server that records every byte it gets and answers what each test scripts (a lying length, a
 * second answer nobody asked for, an answer before the body), so what crosses each way is asserted
 * exactly: no request smuggled in a body, no answer read as the next exchange's.
 */
import type { TLSSocket } from 'node:tls';
import { expect, it } from 'vitest';
import { bodyOf, dechunk, ok, splitRequests, untilClosed, useFramingRig } from './support/framing-rig.js';
import { exchange } from './support/secrets-proxy.js';

const VALUE = 'framing-secret-value-0123456789';
const rigOf = useFramingRig(VALUE);

it('writes the head once, as parsed: the value in the header and query, hop-by-hop lines gone, exactly', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  const answer = await exchange(
    socket,
    `GET /a?key=${rig.placeholder} HTTP/1.1\r\nHost: ${rig.host}\r\nAuthorization: Bearer ${rig.placeholder}\r\nConnection: keep-alive\r\nProxy-Authorization: x\r\nAccept-Encoding: gzip\r\nX-Two: 1\r\nX-Two: 2\r\n\r\n`,
  );
  expect(bodyOf(answer)).toBe('2\r\nok\r\n0\r\n\r\n');
  expect(rig.connections.map((connection) => connection.received)).toEqual([
    `GET /a?key=${VALUE} HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: Bearer ${VALUE}\r\nx-two: 1\r\nx-two: 2\r\naccept-encoding: identity\r\n\r\n`,
  ]);
  socket.destroy();
});

it('sends a request smuggled in a body on as body bytes: one request reaches the server, its placeholder unswapped', async () => {
  const rig = rigOf();
  // Kept alive after the first, so both requests share the connection: one after the other.
  rig.answerWith = (request) => ok('ok', !request.includes('content-length'));
  const smuggled = `GET /admin HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`;
  const socket = await rig.tunnel();
  await exchange(
    socket,
    `POST /in HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${smuggled.length}\r\n\r\n${smuggled}`,
  );
  // Chunked, with the end of the chunks inside a chunk: framed anew, the bytes the same.
  const chunkedBody = `0\r\n\r\n${smuggled}`;
  await exchange(
    socket,
    `POST /in HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\n\r\n${chunkedBody.length.toString(16)}\r\n${chunkedBody}\r\n0\r\n\r\n`,
  );
  expect(rig.connections).toHaveLength(1);
  const [first, second] = splitRequests(rig.connections[0]?.received ?? '');
  expect(first).toBe(
    `POST /in HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${smuggled.length}\r\naccept-encoding: identity\r\n\r\n${smuggled}`,
  );
  const secondHead = `POST /in HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\naccept-encoding: identity\r\n\r\n`;
  expect(second?.startsWith(secondHead)).toBe(true);
  expect(dechunk(second?.slice(secondHead.length) ?? '')).toBe(chunkedBody);
  expect(rig.connections[0]?.received).not.toContain(VALUE);
  expect(rig.notes.some((note) => note.secret === 'FRAMING_TOKEN')).toBe(false);
  socket.destroy();
});

it('drops what an answer sends past its length: the next request gets its own answer, on a new connection', async () => {
  const rig = rigOf();
  rig.answerWith = (request, connection) =>
    connection === 0
      ? `HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged`
      : ok(request.includes('/second') ? 'second' : 'wrong!');
  const socket = await rig.tunnel();
  const first = await exchange(socket, `GET /first HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  expect(bodyOf(first)).toBe('5\r\nhello\r\n0\r\n\r\n');
  const second = await exchange(socket, `GET /second HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  expect(bodyOf(second)).toBe('6\r\nsecond\r\n0\r\n\r\n');
  expect(rig.connections.map((connection) => connection.received.split(' ', 2)[1])).toEqual([
    '/first',
    '/second',
  ]);
  socket.destroy();
});

it('cuts short an answer whose server closes before its length: the tool never reads it as whole', async () => {
  const rig = rigOf();
  rig.answerWith = (_request, connection) => {
    setImmediate(() => rig.connections[connection]?.socket.end());
    return 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhello';
  };
  const socket = await rig.tunnel();
  const answer = await untilClosed(socket, `GET /short HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  expect(answer.startsWith('HTTP/1.1 200 OK')).toBe(true);
  // The chunk's own CRLF goes with what follows it: here nothing does.
  expect(bodyOf(answer)).toBe('5\r\nhello');
  // The proxy's next tunnel is fine.
  rig.answerWith = () => ok('ok');
  const next = await rig.tunnel();
  expect(bodyOf(await exchange(next, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe(
    '2\r\nok\r\n0\r\n\r\n',
  );
  next.destroy();
});

it('does not use a connection again whose answer came before the whole body: the rest is never read as a request', async () => {
  const rig = rigOf();
  // The server refuses on the head alone (as a 413 does), and takes no more of that request.
  rig.answerWith = (request) => (request.startsWith('GET') ? ok('next') : undefined);
  rig.upstream.prependOnceListener('secureConnection', (socket: TLSSocket) => {
    socket.once('data', () => socket.write('HTTP/1.1 413 Payload Too Large\r\ncontent-length: 3\r\n\r\nbig'));
  });
  const socket = await rig.tunnel();
  const body = `GET /hidden HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`;
  const head = `POST /upload HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${body.length}\r\n\r\n`;
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
  const next = await exchange(socket, `${body}GET /after HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  expect(bodyOf(next)).toBe('4\r\nnext\r\n0\r\n\r\n');
  expect(rig.connections).toHaveLength(2);
  expect(rig.connections[0]?.received).toBe(
    `POST /upload HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${body.length}\r\naccept-encoding: identity\r\n\r\n`,
  );
  expect(rig.connections[1]?.received).toBe(
    `GET /after HTTP/1.1\r\nhost: ${rig.host}\r\naccept-encoding: identity\r\n\r\n`,
  );
  socket.destroy();
});

it('passes over a 100 Continue, reads a HEAD answer without its body, and keeps the connection', async () => {
  const rig = rigOf();
  rig.answerWith = (request) =>
    request.startsWith('HEAD')
      ? 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n'
      : `HTTP/1.1 100 Continue\r\n\r\n${ok('ok')}`;
  const socket = await rig.tunnel();
  const head = await new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
    socket.write(`HEAD /h HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  });
  expect(head.startsWith('HTTP/1.1 200 OK')).toBe(true);
  expect(head).toMatch(/\r\ncontent-length: 100\r\n/);
  expect(head.endsWith('\r\n\r\n')).toBe(true);
  const after = await exchange(socket, `GET /g HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  expect(after.startsWith('HTTP/1.1 200 OK')).toBe(true);
  expect(bodyOf(after)).toBe('2\r\nok\r\n0\r\n\r\n');
  expect(rig.connections).toHaveLength(1);
  socket.destroy();
});

it('reads an answer with more header lines than the parser hands over at once, each value swapped back', async () => {
  const rig = rigOf();
  const lines = Array.from(
    { length: 40 },
    (_, index) => `x-line-${index}: ${index === 37 ? VALUE : index}\r\n`,
  );
  rig.answerWith = () =>
    `HTTP/1.1 200 OK\r\n${lines.join('')}connection: close\r\ncontent-length: 2\r\n\r\nok`;
  const socket = await rig.tunnel();
  const answer = await exchange(socket, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  for (let index = 0; index < 40; index += 1)
    expect(answer).toContain(`\r\nx-line-${index}: ${index === 37 ? rig.placeholder : index}\r\n`);
  expect(answer).not.toContain(VALUE);
  socket.destroy();
});

it('answers 502 for an answer that is not HTTP, or switches protocols unasked, and the next request is fine', async () => {
  const rig = rigOf();
  for (const bad of [
    'HTTP/1.1 200 OK\r\nx-bad: a\x01b\r\ncontent-length: 2\r\n\r\nok',
    'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: evil\r\n\r\nraw bytes',
  ]) {
    rig.answerWith = () => bad;
    const socket = await rig.tunnel();
    const answer = await exchange(socket, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
    expect(answer.startsWith('HTTP/1.1 502 Bad Gateway')).toBe(true);
    expect(answer).toContain(`could not reach ${rig.host}`);
    expect(answer).not.toContain('raw bytes');
    rig.answerWith = () => ok('ok');
    const next = await exchange(socket, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
    expect(bodyOf(next)).toBe('2\r\nok\r\n0\r\n\r\n');
    socket.destroy();
  }
});

it('ends the connection to the server when the tool goes away in the middle of an answer', async () => {
  const rig = rigOf();
  // An answer that never ends on its own (a stream of events, say).
  rig.answerWith = () => 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n';
  const socket = await rig.tunnel();
  await new Promise<void>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('first')) resolve();
    });
    socket.write(`GET /events HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  });
  const upstreamSide = rig.connections[0]?.socket;
  expect(upstreamSide?.destroyed).toBe(false);
  const closed = new Promise((resolve) => upstreamSide?.once('close', resolve));
  socket.destroy();
  await closed;
  expect(rig.connections).toHaveLength(1);
});
