/**
 * A hostile tool that tries to exhaust the secrets proxy's own HTTP reading (huge heads, an endless
 * chunk extension, a body that never ends, a flood of pipelined requests), and a bound server that
 * echoes the value where the swap back does not look. Each asserts what reached the real server,
 * that the proxy bounded it, and that the next tunnel is fine.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { expect, it } from 'vitest';
import { expectStillServes } from './support/framing-attacks.js';
import { bodyOf, ok, splitRequests, untilClosed, useFramingRig } from './support/framing-rig.js';
import { exchange } from './support/secrets-proxy.js';

// Only header-name characters, lowercase: a value a header name can hold as it is.
const VALUE = 'attack-exhaust-secret-0123456789';
const rigOf = useFramingRig(VALUE);
// A rig of its own for the body that never ends: it spends its whole call budget (1 MiB), which a
// rig keeps for all its tests (a budget over before the connection's limit holds the exchange).
const budgetRigOf = useFramingRig(VALUE);
// And one whose budget runs out while a request's body is held (its call budget spent exactly first).
const heldRigOf = useFramingRig(VALUE);

/**
 * Writes `head`, then `piece` again and again (waiting on drain) until the proxy closes the
 * connection or `cap` bytes went: how many went.
 */
async function writeUntilClosed(socket: Socket, head: string, piece: Buffer, cap: number): Promise<number> {
  let closed = false;
  socket.on('error', () => {});
  const whenClosed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  socket.resume();
  socket.write(head);
  let written = 0;
  while (!closed && written < cap) {
    written += piece.length;
    if (!socket.write(piece))
      await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), whenClosed]);
  }
  if (!closed) socket.destroy();
  return written;
}

it('closes a connection whose request head is over 16 KiB (one line, or many): nothing reaches the server', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  for (const head of [
    `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}${'b'.repeat(20_000)}\r\n\r\n`,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n${'x-many: 1\r\n'.repeat(3000)}\r\n`,
  ]) {
    const socket = await rig.tunnel();
    expect(await untilClosed(socket, head)).toBe('');
  }
  // A head that never ends, sent in pieces: cut at the limit, not read on.
  const endless = await rig.tunnel();
  const went = await writeUntilClosed(
    endless,
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n`,
    Buffer.from('x-more: 0123456789abcdef\r\n'),
    4 << 20,
  );
  expect(went).toBeLessThan(1 << 20);
  expect(rig.connections).toEqual([]);
  await expectStillServes(rigOf());
});

it('closes a connection that sends an endless chunk extension: the server gets the head alone', async () => {
  const rig = rigOf();
  const socket = await rig.tunnel();
  const head = `POST /ext HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\n\r\n`;
  const went = await writeUntilClosed(socket, `${head}1;x=`, Buffer.alloc(16 * 1024, 'e'), 8 << 20);
  expect(went).toBeLessThan(1 << 20);
  // The head went on when it was read; not a byte of the chunk did.
  for (const { received } of rig.connections)
    expect(received).toBe(
      `POST /ext HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\naccept-encoding: identity\r\n\r\n`,
    );
  await expectStillServes(rigOf());
});

it('closes a connection whose chunked body ends in endless trailers: they are bounded as a head is', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  const socket = await rig.tunnel();
  const head = `POST /trailers HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\n\r\n`;
  const went = await writeUntilClosed(
    socket,
    `${head}2\r\nhi\r\n0\r\n`,
    Buffer.from(`x-trailer: ${rig.placeholder}\r\n`),
    8 << 20,
  );
  expect(went).toBeLessThan(1 << 20);
  for (const { received } of rig.connections)
    expect(received).toBe(
      `POST /trailers HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked\r\naccept-encoding: identity\r\n\r\n2\r\nhi\r\n`,
    );
  await expectStillServes(rigOf());
});

it('refuses a tunnel past the most open connections (8 here) while each holds a request the server never answers, and frees them all when the tool goes', async () => {
  const rig = rigOf();
  let arrived = 0;
  let allArrived: () => void = () => {};
  const eight = new Promise<void>((resolve) => {
    allArrived = resolve;
  });
  rig.answerWith = () => {
    arrived += 1;
    if (arrived === 8) allArrived();
    return undefined;
  };
  const tunnels: Socket[] = [];
  for (let index = 0; index < 8; index += 1) {
    const socket = await rig.tunnel();
    socket.write(
      `GET /hang/${index} HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
    );
    tunnels.push(socket);
  }
  await eight;
  await expect(rig.tunnel()).rejects.toThrow();
  expect(rig.connections).toHaveLength(8);
  const serverSides = rig.connections.map(
    ({ socket }) =>
      new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve))),
  );
  for (const socket of tunnels) socket.destroy();
  // The tool went away mid-answer: every connection to the server ends with it.
  await Promise.all(serverSides);
  await expectStillServes(rigOf());
});

it('answers a flood of pipelined requests in one write in turn, each its own', async () => {
  const rig = rigOf();
  const count = 400;
  rig.answerWith = (request) => {
    const number = /GET \/n\/(\d+) /.exec(request)?.[1] ?? 'none';
    return ok(number, number === String(count - 1));
  };
  const socket = await rig.tunnel();
  let requests = '';
  for (let index = 0; index < count; index += 1)
    requests += `GET /n/${index} HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`;
  const answers = await new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.split('\r\n0\r\n\r\n').length === count + 1) resolve(text);
    });
    socket.write(requests);
  });
  const bodies = answers
    .split('\r\n0\r\n\r\n')
    .slice(0, count)
    .map((answer) => bodyOf(answer).split('\r\n')[1]);
  expect(bodies).toEqual(Array.from({ length: count }, (_, index) => String(index)));
  const sent = splitRequests(rig.connections.map((connection) => connection.received).join(''));
  expect(sent).toHaveLength(count);
  for (const [index, request] of sent.entries())
    expect(request).toBe(
      `GET /n/${index} HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${VALUE}\r\naccept-encoding: identity\r\n\r\n`,
    );
  socket.destroy();
});

// The value in an answer's header NAME: names are lowercased, so the value can't be swapped back in
// one as it was. A bound API that echoes what it is sent as a header name (`x-<token>: 1`, as some
// reflect a key or a cookie name) has that header line dropped; the answer goes on.
it('never lets the value back in an answer’s header name', async () => {
  const rig = rigOf();
  rig.answerWith = () =>
    `HTTP/1.1 200 OK\r\nx-${VALUE}: 1\r\n${VALUE}: 2\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok`;
  const socket = await rig.tunnel();
  const answer = await exchange(socket, `GET /echo HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  socket.destroy();
  // Those two lines dropped, the rest of the answer as it was.
  expect(answer).toBe('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n');
});

it('ends a body that never ends at the connection’s byte limit (1 MiB here), and the server hears the end', async () => {
  const rig = budgetRigOf();
  const socket = await rig.tunnel();
  const went = await writeUntilClosed(
    socket,
    `PUT /big HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${1 << 30}\r\n\r\n`,
    Buffer.alloc(64 * 1024, 'b'),
    16 << 20,
  );
  expect(went).toBeLessThan(16 << 20);
  const upstreamSide = rig.connections[0]?.socket;
  if (upstreamSide !== undefined && !upstreamSide.destroyed)
    await new Promise((resolve) => upstreamSide.once('close', resolve));
  const received = rig.connections[0]?.received ?? '';
  expect(
    received.startsWith(`PUT /big HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${1 << 30}\r\n`),
  ).toBe(true);
  expect(received.length).toBeLessThanOrEqual((1 << 20) + 200);
  // Its budget spent, this rig's proxy moves no more bodies; the process's other proxy serves on.
  await expectStillServes(rigOf());
});

it('ends the connection after a 502 that comes while the call budget holds the body: the rest is never read uncounted', async () => {
  const rig = heldRigOf();
  // The call's whole budget (1 MiB), spent exactly: the next body byte holds every open exchange.
  rig.answerWith = () =>
    `HTTP/1.1 200 OK\r\ncontent-length: ${1 << 20}\r\nconnection: close\r\n\r\n${'z'.repeat(1 << 20)}`;
  const fill = await rig.tunnel();
  await exchange(fill, `GET /fill HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`);
  fill.destroy();
  // Once held, the server breaks off before answering: the proxy answers the tool 502.
  const held = new Promise<void>((resolve) => {
    rig.onBudgetOver = resolve;
  });
  const headArrived = new Promise<TLSSocket>((resolve) =>
    rig.upstream.once('secureConnection', (upstream: TLSSocket) =>
      upstream.once('data', () => resolve(upstream)),
    ),
  );
  void Promise.all([headArrived, held]).then(([upstream]) => upstream.destroy());
  const socket = await rig.tunnel();
  let answer = '';
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString('latin1');
  });
  // As a client does once the answer and the proxy's end have come: it ends its side too, and
  // waits for the connection to close. The proxy reads that end (dropping the body bytes before it)
  // and closes; a proxy that stopped reading would hold the connection until its 30-second head
  // timeout, past this test's own.
  socket.once('end', () => socket.end());
  const went = await writeUntilClosed(
    socket,
    `PUT /held HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: ${8 << 20}\r\n\r\n`,
    Buffer.alloc(64 * 1024, 'h'),
    8 << 20,
  );
  expect(answer.startsWith('HTTP/1.1 502 Bad Gateway\r\n')).toBe(true);
  // The 502 ended the connection: the body was not read on to its end, uncounted.
  expect(went).toBeLessThan(8 << 20);
}, 15_000);
