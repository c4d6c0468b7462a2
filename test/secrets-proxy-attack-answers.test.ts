/**
 * A hostile bound server (or a tool that makes the bound API echo what it chooses) against the
 * secrets proxy's answer side, byte for byte: answers framed to spill into the next exchange on the
 * proxy's kept-alive connection, and the secret's value sent back in every place an answer has. Each
 * asserts exactly what the tool reads: its own answer, and never the value.
 */
import type { TLSSocket } from 'node:tls';
import { expect, it } from 'vitest';
import { bodyOf, dechunk, ok, untilClosed, useFramingRig } from './support/framing-rig.js';
import { exchange } from './support/secrets-proxy.js';

// Characters a query must percent-encode, as many real tokens (base64) hold.
const VALUE = 'attack/answers+secret=0123456789';
const rigOf = useFramingRig(VALUE);

/** An answer's body as the tool read it (chunked by the proxy). */
const bodyText = (answer: string) => dechunk(bodyOf(answer));

it('gives the next request its own answer after a server sent bytes past a chunked end, or answered twice later', async () => {
  const rig = rigOf();
  const forged = `HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged`;
  rig.answerWith = (request, connection) => {
    if (request.includes('/after')) return ok(`own ${connection}`);
    if (request.includes('/late')) {
      // Kept alive, then a second answer nobody asked for once the tool read the first.
      const socket = rig.connections[connection]?.socket;
      setImmediate(() => socket?.write(forged));
      return 'HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nlate';
    }
    return `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n0\r\n\r\n${forged}`;
  };
  const socket = await rig.tunnel();
  expect(bodyText(await exchange(socket, `GET /first HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('first');
  expect(bodyText(await exchange(socket, `GET /after HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('own 1');
  expect(bodyText(await exchange(socket, `GET /late HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('late');
  // The late answer ends the connection it came on (the server sees it close): never read as the next.
  const lateSide = rig.connections[2]?.socket;
  if (lateSide !== undefined && !lateSide.destroyed)
    await new Promise((resolve) => lateSide.once('close', resolve));
  expect(bodyText(await exchange(socket, `GET /after HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('own 3');
  expect(rig.connections.map((connection) => connection.received.split(' ', 2)[1])).toEqual([
    '/first',
    '/after',
    '/late',
    '/after',
  ]);
  socket.destroy();
});

it('reads 204, 304 and HEAD answers without a body and 1xx as nothing: what a server sends after them never reaches the next exchange', async () => {
  const rig = rigOf();
  const forged = `HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged`;
  rig.answerWith = (request) => {
    if (request.includes('/own')) return ok('own', false);
    if (request.includes('/204')) return `HTTP/1.1 204 No Content\r\ncontent-length: 6\r\n\r\n${forged}`;
    if (request.includes('/304')) return `HTTP/1.1 304 Not Modified\r\n\r\n${forged}`;
    if (request.startsWith('HEAD')) return `HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged`;
    return `HTTP/1.1 103 Early Hints\r\nlink: </${VALUE}>\r\nx-hint: ${VALUE}\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n${ok(`one ${VALUE}`)}`;
  };
  const socket = await rig.tunnel();
  for (const [request, status] of [
    ['GET /204', '204 No Content'],
    ['GET /304', '304 Not Modified'],
    ['HEAD /head', '200 OK'],
  ]) {
    const answer = await new Promise<string>((resolve) => {
      socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
      socket.write(`${request} HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
    });
    expect(answer.startsWith(`HTTP/1.1 ${status}\r\n`)).toBe(true);
    expect(answer.endsWith('\r\n\r\n')).toBe(true);
    expect(answer).not.toContain('forged');
    expect(bodyText(await exchange(socket, `GET /own HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('own');
  }
  const hinted = await exchange(socket, `GET /hints HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  expect(hinted.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
  expect(bodyText(hinted)).toBe(`one ${rig.placeholder}`);
  expect(hinted).not.toContain(VALUE);
  expect(hinted).not.toContain('hint');
  socket.destroy();
});

it('cuts short an answer whose server closes mid-chunk: the tool never reads a last chunk, and the next tunnel is fine', async () => {
  const rig = rigOf();
  rig.answerWith = (_request, connection) => {
    setImmediate(() => rig.connections[connection]?.socket.end());
    return 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\na\r\nhello';
  };
  const socket = await rig.tunnel();
  const answer = await untilClosed(socket, `GET /cut HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  expect(bodyOf(answer)).toBe('5\r\nhello');
  rig.answerWith = () => ok('ok');
  const next = await rig.tunnel();
  expect(bodyText(await exchange(next, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('ok');
  next.destroy();
});

it('swaps the value back wherever it comes whole: header values, Location, a reason phrase, a body split at every offset', async () => {
  const rig = rigOf();
  rig.answerWith = (request) => {
    const offset = Number(/GET \/split\/(\d+)/.exec(request)?.[1] ?? -1);
    if (offset >= 0) {
      const body = `<${VALUE}>`;
      const first = body.slice(0, offset);
      const second = body.slice(offset);
      const chunk = (text: string) => (text === '' ? '' : `${text.length.toString(16)}\r\n${text}\r\n`);
      // The last one closes: no kept connection outlives the test.
      const close = offset === VALUE.length + 2 ? 'connection: close\r\n' : '';
      return `HTTP/1.1 200 OK\r\n${close}transfer-encoding: chunked\r\n\r\n${chunk(first)}${chunk(second)}0\r\n\r\n`;
    }
    return `HTTP/1.1 302 Found ${VALUE}\r\nlocation: https://${rig.host}/next?token=${VALUE}\r\nset-cookie: s=${VALUE}; Path=/\r\nx-echo: Bearer ${VALUE}, ${VALUE}\r\ncontent-length: ${VALUE.length}\r\n\r\n${VALUE}`;
  };
  const socket = await rig.tunnel();
  const echoed = await exchange(socket, `GET /echo HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  const placeholder = rig.placeholder;
  expect(echoed).toBe(
    `HTTP/1.1 302 Found\r\nlocation: https://${rig.host}/next?token=${placeholder}\r\nset-cookie: s=${placeholder}; Path=/\r\nx-echo: Bearer ${placeholder}, ${placeholder}\r\ntransfer-encoding: chunked\r\n\r\n${placeholder.length.toString(16)}\r\n${placeholder}\r\n0\r\n\r\n`,
  );
  for (let offset = 0; offset <= VALUE.length + 2; offset += 1) {
    const answer = await exchange(socket, `GET /split/${offset} HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
    expect(bodyText(answer), `split at ${offset}`).toBe(`<${placeholder}>`);
    expect(answer).not.toContain(VALUE);
  }
  socket.destroy();
});

// Answer trailers: llhttp hands a chunked answer's trailer lines to kOnHeaders. The upstream pool is
// the proxy's, shared by tunnels, so a trailer kept for the next answer's head would reach another
// tunnel's tool as a header (a `set-cookie`, a `location`, a `content-length` before a 204): each
// answer starts clean, and lines past the head are dropped.
it('drops an answer trailer: it never becomes a header of the next answer, on this tunnel or another', async () => {
  const rig = rigOf();
  rig.answerWith = (request) =>
    request.includes('/one')
      ? `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\none\r\n0\r\nset-cookie: stolen=${VALUE}\r\nx-trailer: t\r\n\r\n`
      : ok('two');
  const one = await rig.tunnel();
  const first = await exchange(one, `GET /one HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  one.destroy();
  const two = await rig.tunnel();
  const second = await exchange(two, `GET /two HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  two.destroy();
  // Both on the one kept connection to the server.
  expect(rig.connections).toHaveLength(1);
  expect(first).not.toContain(VALUE);
  expect(second).toBe('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n');
});

// The value as the proxy itself encoded it: a placeholder in the query is swapped for
// `encodeURIComponent(value)`. A server that repeats the request's URL (a redirect that keeps the
// query, a `self` link, an error page naming the URL: all common) hands it back percent-encoded,
// which decodes to the key: here `attack%2Fanswers%2Bsecret%3D0123456789` in `location`. Every form
// the proxy sends is searched for (and the lower-case hex one: see the next test).
it('never lets the value back in the form the proxy sent it in the query (percent-encoded)', async () => {
  const rig = rigOf();
  rig.answerWith = (request) => {
    const target = /^GET (\S+) /.exec(request)?.[1] ?? '';
    return `HTTP/1.1 301 Moved Permanently\r\nlocation: https://${rig.host}${target.replace('/a?', '/a/?')}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`;
  };
  const socket = await rig.tunnel();
  const answer = await exchange(
    socket,
    `GET /a?key=${rig.placeholder} HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`,
  );
  socket.destroy();
  expect(rig.connections.at(-1)?.received).toContain(`?key=${encodeURIComponent(VALUE)} `);
  expect(answer).toContain('location: ');
  expect(answer).not.toContain(encodeURIComponent(VALUE));
});

it('swaps the percent-encoded value back with upper- or lower-case hex, in a header and a body split at every offset, and drops a header named by it', async () => {
  const rig = rigOf();
  const upper = encodeURIComponent(VALUE);
  const lower = upper.replace(/%[0-9A-F]{2}/g, (percentEscape) => percentEscape.toLowerCase());
  expect(lower).not.toBe(upper);
  const both = `<${upper}|${lower}>`;
  rig.answerWith = (request) => {
    const offset = Number(/GET \/split\/(\d+)/.exec(request)?.[1] ?? -1);
    if (offset < 0)
      return `HTTP/1.1 200 OK\r\nx-${upper.toUpperCase()}: 1\r\nx-${lower}: 2\r\nx-echo: ${upper} ${lower}\r\ncontent-length: 2\r\n\r\nok`;
    const chunk = (text: string) => (text === '' ? '' : `${text.length.toString(16)}\r\n${text}\r\n`);
    const close = offset === both.length ? 'connection: close\r\n' : '';
    return `HTTP/1.1 200 OK\r\n${close}transfer-encoding: chunked\r\n\r\n${chunk(both.slice(0, offset))}${chunk(both.slice(offset))}0\r\n\r\n`;
  };
  const socket = await rig.tunnel();
  const placeholder = rig.placeholder;
  expect(await exchange(socket, `GET /echo HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`)).toBe(
    `HTTP/1.1 200 OK\r\nx-echo: ${placeholder} ${placeholder}\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n`,
  );
  for (let offset = 0; offset <= both.length; offset += 1) {
    const answer = await exchange(socket, `GET /split/${offset} HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
    expect(bodyText(answer), `split at ${offset}`).toBe(`<${placeholder}|${placeholder}>`);
  }
  socket.destroy();
});

it('refuses an answer head over the limit, and one with a bad status, with 502: the next request is fine', async () => {
  const rig = rigOf();
  const socket = await rig.tunnel();
  for (const bad of [
    `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(20_000)}${VALUE}\r\ncontent-length: 0\r\n\r\n`,
    `HTTP/1.1 2000 OK\r\ncontent-length: 0\r\n\r\n`,
    `HTTP/1.1 200 OK\r\nx-a: ${VALUE}\0\r\ncontent-length: 0\r\n\r\n`,
    `HTTP/1.1 200 OK\r\n x-folded: ${VALUE}\r\ncontent-length: 0\r\n\r\n`,
  ]) {
    rig.answerWith = () => bad;
    const answer = await exchange(socket, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
    expect(answer.startsWith('HTTP/1.1 502 Bad Gateway\r\n'), bad.slice(0, 40)).toBe(true);
    expect(answer).not.toContain(VALUE);
    rig.answerWith = () => ok('ok');
    expect(bodyText(await exchange(socket, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('ok');
  }
  socket.destroy();
});

it('never reads a server that sends before any request: its bytes go nowhere, the next request is its own', async () => {
  const rig = rigOf();
  // Kept alive after the first answer only: no kept connection outlives the test.
  rig.answerWith = (request) => ok('own', request.includes('/two'));
  const socket = await rig.tunnel();
  expect(bodyText(await exchange(socket, `GET /one HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('own');
  // The kept connection, idle in the pool, gets an answer nobody asked for.
  const idle = rig.connections[0]?.socket as TLSSocket;
  const closed = new Promise((resolve) => idle.once('close', resolve));
  idle.write(`HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nforged`);
  await closed;
  expect(bodyText(await exchange(socket, `GET /two HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe('own');
  expect(rig.connections).toHaveLength(2);
  socket.destroy();
});

it('swaps the value back when the server sends it in pieces, one write each, in a body framed by its length', async () => {
  const rig = rigOf();
  const body = `[${VALUE}]`;
  rig.answerWith = (_request, connection) => {
    const socket = rig.connections[connection]?.socket;
    // One write per piece, each after the last went out: separate records, read apart.
    const pieces = [body.slice(4, 9), body.slice(9, 20), body.slice(20)];
    const writeNext = () => {
      const piece = pieces.shift();
      if (piece !== undefined) socket?.write(piece, writeNext);
    };
    setImmediate(writeNext);
    return `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.slice(0, 4)}`;
  };
  const socket = await rig.tunnel();
  const answer = await exchange(socket, `GET /pieces HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  socket.destroy();
  expect(bodyText(answer)).toBe(`[${rig.placeholder}]`);
  expect(answer).not.toContain(VALUE);
});

it('gives each of two tunnels sharing the pool only its own answers, the slower server connection answering last', async () => {
  const rig = rigOf();
  rig.answerWith = (request, connection) => {
    const path = /^GET (\S+) /.exec(request)?.[1] ?? '';
    const answer = ok(`${path} ${VALUE}`, path.endsWith('/9'));
    // The first server connection answers a turn later than the second.
    if (connection % 2 === 0) {
      setImmediate(() => rig.connections[connection]?.socket.write(answer));
      return undefined;
    }
    return answer;
  };
  const one = await rig.tunnel();
  const two = await rig.tunnel();
  const run = async (socket: typeof one, name: string) => {
    const bodies: string[] = [];
    for (let index = 0; index < 10; index += 1)
      bodies.push(
        bodyText(await exchange(socket, `GET /${name}/${index} HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`)),
      );
    return bodies;
  };
  const [fromOne, fromTwo] = await Promise.all([run(one, 'one'), run(two, 'two')]);
  one.destroy();
  two.destroy();
  expect(fromOne).toEqual(Array.from({ length: 10 }, (_, index) => `/one/${index} ${rig.placeholder}`));
  expect(fromTwo).toEqual(Array.from({ length: 10 }, (_, index) => `/two/${index} ${rig.placeholder}`));
});

it('never passes on an answer’s chunk extensions, whatever they hold: dropped, or the answer cut', async () => {
  const rig = rigOf();
  rig.answerWith = (request) =>
    request.includes('/quoted')
      ? `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n5;v=x;w="${VALUE}"\r\nhello\r\n0;end="${VALUE}"\r\n\r\n`
      : `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n5;v=${VALUE}\r\nhello\r\n0\r\n\r\n`;
  const socket = await rig.tunnel();
  const answer = await exchange(socket, `GET /quoted HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  socket.destroy();
  expect(answer).toBe('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
  // An extension the strict parser refuses (`/`, `=` outside quotes), before any body byte reached
  // the tool: nothing of that answer, a 502 instead (the head held for the body is never written).
  const bare = await rig.tunnel();
  const refused = await exchange(bare, `GET /bare HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  bare.destroy();
  expect(refused.startsWith('HTTP/1.1 502 Bad Gateway\r\n')).toBe(true);
  expect(refused).toContain('broke off before its body');
  expect(refused).not.toContain(VALUE);
});
