/**
 * A hostile tool against the secrets proxy's request side, byte for byte: requests framed to be read
 * two ways, headers and chunks that hide a second request or carry a placeholder past the swap, and
 * requests that name another host on the intercepted connection. Each asserts exactly what reaches
 * the real server (nothing, or one request written anew), and that the next tunnel is fine.
 */
import { expect, it } from 'vitest';
import { expectStillServes } from './support/framing-attacks.js';
import { bodyOf, ok, splitRequests, untilClosed, useFramingRig } from './support/framing-rig.js';
import { exchange } from './support/secrets-proxy.js';

const VALUE = 'attack-requests-secret-0123456789';
const rigOf = useFramingRig(VALUE);

it('ends the connection, nothing sent on, for framing and header bytes two parsers could read two ways', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const smuggled = `GET /smuggled HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`;
  const start = `POST / HTTP/1.1\r\nhost: ${rig.host}\r\n`;
  for (const request of [
    `${start}transfer-encoding: chunked, identity\r\n\r\n0\r\n\r\n${smuggled}`,
    `${start}transfer-encoding: xchunked\r\n\r\n0\r\n\r\n${smuggled}`,
    `${start}transfer-encoding: chunked\r\ntransfer-encoding: identity\r\n\r\n0\r\n\r\n${smuggled}`,
    `${start}transfer-encoding: identity\r\ncontent-length: 5\r\n\r\n0\r\n\r\n${smuggled}`,
    `${start}content-length: 3\r\ncontent-length: 3\r\n\r\nabc${smuggled}`,
    `${start}content-length: 3, 3\r\n\r\nabc${smuggled}`,
    `${start}content-length: +3\r\n\r\nabc${smuggled}`,
    `${start}content-length: -3\r\n\r\nabc${smuggled}`,
    `${start}content-length: 3 4\r\n\r\nabc${smuggled}`,
    `${start}content-length: 0x3\r\n\r\nabc${smuggled}`,
    `${start}content-length : 3\r\n\r\nabc${smuggled}`,
    `${start}transfer-encoding: chunked\r\n\r\nffffffffffffffff1\r\nabc\r\n0\r\n\r\n${smuggled}`,
    `${start}transfer-encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n${smuggled}`,
    `${start}transfer-encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n${smuggled}`,
    `${start}transfer-encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n${smuggled}`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nx-a: one\rx-b: two\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nx-a: a\0b\r\n\r\n`,
    `GET /a\0b HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`,
    `GET /a b HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\tauthorization: ${rig.placeholder}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization : ${rig.placeholder}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nx(y): 1\r\n\r\n`,
    `GET / HTTP/1.1\r\n\r\n`,
  ]) {
    const socket = await rig.tunnel();
    expect(await untilClosed(socket, request), JSON.stringify(request)).toMatch(/^(|HTTP\/1\.1 421 .*)$/s);
  }
  expect(rig.connections).toEqual([]);
  await expectStillServes(rigOf());
});

it('sends a chunk extension or a trailer as nothing: the body re-chunked bare, the placeholder in them never swapped', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  const answer = await untilClosed(
    socket,
    `POST /x HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n3;ext=${rig.placeholder}\r\nabc\r\n0\r\nx-trailer: ${rig.placeholder}\r\n\r\n`,
  );
  expect(answer).toBe('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nok');
  expect(rig.connections.map((connection) => connection.received)).toEqual([
    `POST /x HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\naccept-encoding: identity\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
  ]);
  socket.destroy();
});

// Request trailers: llhttp hands a chunked request's trailer lines to kOnHeaders, with the request's
// URL again. Each request starts clean and header lines past the head are dropped, so a trailer never
// becomes a header of the next request (its placeholder swapped), nor its URL part of the next path.
it('drops a request trailer: it never becomes a header of the next request, swapped or not', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  await exchange(
    socket,
    `POST /one HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nx-carried: ${rig.placeholder}\r\n\r\n`,
  );
  await exchange(socket, `GET /two HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  socket.destroy();
  expect(splitRequests(rig.connections.map((connection) => connection.received).join(''))[1]).toBe(
    `GET /two HTTP/1.1\r\nhost: ${rig.host}\r\naccept-encoding: identity\r\n\r\n`,
  );
});

// The Host check, through the same carry-over: a trailer `host: <bound host>` must not become the first
// Host line of the next request, which names another host and is refused 421 like the same request
// alone. (llhttp itself refuses a `content-length` or `transfer-encoding` trailer.)
it('refuses (421) a request naming another host, whatever Host a trailer before it named', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  await exchange(
    socket,
    `POST /one HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\n\r\n0\r\nhost: ${rig.host}\r\n\r\n`,
  );
  const answer = await exchange(
    socket,
    `GET /two HTTP/1.1\r\nhost: evil.test\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
  );
  socket.destroy();
  expect(answer.startsWith('HTTP/1.1 421 Misdirected Request\r\n')).toBe(true);
  expect(rig.connections.map((connection) => connection.received).join('')).not.toContain(VALUE);
});

it('refuses (421) a request in absolute form or naming another host, alone or pipelined after a good one', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const port = rig.host.split(':')[1];
  for (const bad of [
    `GET http://evil.test/ HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    `GET http://${rig.host}/ HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: evil.test:${port}\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: bound.test\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}@evil.test\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: evil.test\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    `OPTIONS * HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
  ]) {
    rig.connections.length = 0;
    const socket = await rig.tunnel();
    const good = `GET /good HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`;
    const answer = await untilClosed(socket, good + bad);
    const [first, second] = answer.split(/(?<=\r\n0\r\n\r\n)/);
    expect(bodyOf(first ?? ''), bad).toBe('2\r\nok\r\n0\r\n\r\n');
    expect(second?.startsWith('HTTP/1.1 421 Misdirected Request\r\n'), bad).toBe(true);
    expect(second).toContain('names another host');
    expect(rig.connections.map((connection) => connection.received)).toEqual([
      `GET /good HTTP/1.1\r\nhost: ${rig.host}\r\naccept-encoding: identity\r\n\r\n`,
    ]);
  }
});

it('writes the bound Host once, whatever second Host line follows the tool’s first', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  await exchange(
    socket,
    `GET /h HTTP/1.1\r\nhost: ${rig.host}\r\nhost: evil.test\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
  ).catch(() => undefined);
  socket.destroy();
  // Refused outright by the strict parser, or sent on with the bound Host alone.
  for (const { received } of rig.connections)
    expect(received).toBe(
      `GET /h HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${VALUE}\r\naccept-encoding: identity\r\n\r\n`,
    );
});

it('refuses CONNECT and an upgrade inside the intercepted connection (501): nothing reaches the server', async () => {
  const rig = rigOf();
  for (const request of [
    `CONNECT evil.test:443 HTTP/1.1\r\nhost: evil.test:443\r\nproxy-authorization: ${rig.placeholder}\r\n\r\n\x16\x03\x01`,
    `CONNECT ${rig.host} HTTP/1.1\r\nhost: ${rig.host}\r\n\r\nGET / HTTP/1.1\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nconnection: upgrade\r\nupgrade: h2c\r\nhttp2-settings: AAA\r\n\r\n`,
    `POST / HTTP/1.1\r\nhost: ${rig.host}\r\nconnection: Upgrade, keep-alive\r\nupgrade: websocket\r\ncontent-length: 4\r\n\r\nbody`,
  ]) {
    const socket = await rig.tunnel();
    const answer = await untilClosed(socket, request);
    expect(answer, request).toMatch(/^(HTTP\/1\.1 501 Not Implemented\r\n.*|)$/s);
    expect(answer).not.toContain(VALUE);
  }
  expect(rig.connections).toEqual([]);
  await expectStillServes(rigOf());
});

it('never swaps the placeholder in the path, the body, a header name or a chunk, only in header values and the query', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  const body = `a=${rig.placeholder}`;
  await exchange(
    socket,
    `POST /p/${rig.placeholder}?q=${rig.placeholder} HTTP/1.1\r\nhost: ${rig.host}\r\nx-${rig.placeholder}: v\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  );
  socket.destroy();
  expect(rig.connections.map((connection) => connection.received)).toEqual([
    `POST /p/${rig.placeholder}?q=${VALUE} HTTP/1.1\r\nhost: ${rig.host}\r\nx-${rig.placeholder.toLowerCase()}: v\r\ncontent-length: ${body.length}\r\naccept-encoding: identity\r\n\r\n${body}`,
  ]);
});

it('never swaps a placeholder split across a chunked body’s chunks: the server gets the chunks’ bytes, re-chunked', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const body = `a=${rig.placeholder}&b=${rig.placeholder}`;
  const cuts = [0, 5, 17, 30, 31, 50, body.length];
  let chunks = '';
  for (let index = 0; index + 1 < cuts.length; index += 1) {
    const piece = body.slice(cuts[index], cuts[index + 1]);
    chunks += `${piece.length.toString(16)}\r\n${piece}\r\n`;
  }
  const socket = await rig.tunnel();
  await exchange(
    socket,
    `POST /b HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
  );
  socket.destroy();
  const received = rig.connections.map((connection) => connection.received).join('');
  expect(received).toBe(
    `POST /b HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\naccept-encoding: identity\r\n\r\n${chunks}0\r\n\r\n`,
  );
  expect(received).not.toContain(VALUE);
});

it('sends nothing after a request that closes (connection: close, or HTTP/1.0): a request pipelined behind it never goes on', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const behind = `GET /behind HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`;
  for (const first of [
    `GET /last HTTP/1.1\r\nhost: ${rig.host}\r\nconnection: close\r\n\r\n`,
    `GET /last HTTP/1.0\r\nhost: ${rig.host}\r\nconnection: keep-alive\r\n\r\n`,
  ]) {
    rig.connections.length = 0;
    const socket = await rig.tunnel();
    const answer = await untilClosed(socket, first + behind);
    // Bytes after a message that closes are a parse error to the strict parser: the connection may
    // end before the first answer (as Node's server ends it), but the request behind never goes on.
    expect(['', 'HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nok']).toContain(answer);
    for (const { received } of rig.connections)
      expect(received).toBe(`GET /last HTTP/1.1\r\nhost: ${rig.host}\r\naccept-encoding: identity\r\n\r\n`);
  }
});

// Framing spelled with `_` (server-dependent): llhttp takes `transfer_encoding` and `content_length`
// as ordinary header names. A server that maps `_` and `-` alike (CGI/WSGI environ: both become
// HTTP_TRANSFER_ENCODING, why gunicorn 22 drops such names by default) would frame the body the
// tool's way beside the proxy's framing, and read the rest as a request the tool wrote, on the
// proxy's pooled connection. The proxy drops such names: the server sees its framing alone.
it('never sends the server a header that reads as framing with `_` for `-`', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const smuggled = `GET /smuggled HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`;
  const socket = await rig.tunnel();
  await exchange(
    socket,
    `POST /u HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${3 + smuggled.length}\r\ntransfer_encoding: chunked\r\ncontent_length: 0\r\n\r\n0\r\n${smuggled}`,
  );
  socket.destroy();
  const received = rig.connections.map((connection) => connection.received).join('');
  expect(received.startsWith('POST /u HTTP/1.1\r\n')).toBe(true);
  expect(received.toLowerCase()).not.toMatch(/\r\n(transfer_encoding|content_length):/);
});

it('refuses an empty Transfer-Encoding, or frames it as the parser does (no body): the request after it is never a body', async () => {
  const rig = rigOf();
  rig.answerWith = (request) => ok('ok', request.includes('/two'));
  const socket = await rig.tunnel();
  const second = `GET /two HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\nconnection: close\r\n\r\n`;
  const answers = await untilClosed(
    socket,
    `POST /one HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding:\r\n\r\n${second}`,
  );
  const received = rig.connections.map((connection) => connection.received).join('');
  if (answers === '') {
    // Node 22 on: llhttp refuses it (HPE_INVALID_TRANSFER_ENCODING), and nothing goes on.
    expect(received).toBe('');
    return;
  }
  // Node 20: no body, sent on as an empty chunked one, and the request after it as its own.
  expect(answers).toBe(
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nconnection: close\r\n\r\nok',
  );
  expect(received).toBe(
    `POST /one HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\naccept-encoding: identity\r\n\r\n0\r\n\r\n` +
      `GET /two HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${VALUE}\r\naccept-encoding: identity\r\n\r\n`,
  );
});
