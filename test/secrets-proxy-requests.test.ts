/**
 * How the secrets proxy reads a tool's requests on an intercepted connection (Node's llhttp parser,
 * strict, with no HTTP server around it) and frames their answers, byte for byte: requests sent one
 * after another in one write each get their answer in turn, framing that two parsers could read two
 * ways ends the connection with nothing sent on, and a client that closes gets an answer that ends
 * with the close.
 */
import { expect, it } from 'vitest';
import { bodyOf, ok, untilClosed, useFramingRig } from './support/framing-rig.js';
import { exchange } from './support/secrets-proxy.js';

const VALUE = 'requests-secret-value-0123456789';
const rigOf = useFramingRig(VALUE);

it('answers requests sent together in one write in turn, each sent on whole and alone', async () => {
  const rig = rigOf();
  rig.answerWith = (request) => ok(request.startsWith('GET') ? 'one' : 'two', !request.startsWith('GET'));
  const socket = await rig.tunnel();
  const first = `GET /one HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`;
  const second = `POST /two HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: 4\r\n\r\nbody`;
  const both = await new Promise<string>((resolve) => {
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.split('\r\n0\r\n\r\n').length === 3) resolve(answer);
    });
    socket.write(first + second);
  });
  const [one, two] = both.split(/(?<=\r\n0\r\n\r\n)/);
  expect(bodyOf(one ?? '')).toBe('3\r\none\r\n0\r\n\r\n');
  expect(bodyOf(two ?? '')).toBe('3\r\ntwo\r\n0\r\n\r\n');
  expect(rig.connections.map((connection) => connection.received)).toEqual([
    `GET /one HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${VALUE}\r\naccept-encoding: identity\r\n\r\n` +
      `POST /two HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: 4\r\naccept-encoding: identity\r\n\r\nbody`,
  ]);
  socket.destroy();
});

it('reads the rest of a waiting request once its turn comes (its body not all sent yet)', async () => {
  const rig = rigOf();
  rig.answerWith = (request) => ok(request.startsWith('GET') ? 'one' : 'two', !request.startsWith('GET'));
  const socket = await rig.tunnel();
  const both = await new Promise<string>((resolve) => {
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      // The rest of the second body goes only once the first answer came.
      if (answer.split('\r\n0\r\n\r\n').length === 2) socket.write('dy');
      if (answer.split('\r\n0\r\n\r\n').length === 3) resolve(answer);
    });
    socket.write(
      `GET /one HTTP/1.1\r\nhost: ${rig.host}\r\n\r\nPOST /two HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: 4\r\n\r\nbo`,
    );
  });
  expect(both.split('\r\n0\r\n\r\n').map(bodyOf).slice(0, 2)).toEqual(['3\r\none', '3\r\ntwo']);
  expect(rig.connections[0]?.received.endsWith('\r\n\r\nbody')).toBe(true);
  socket.destroy();
});

it('ends the connection on framing two parsers could read two ways: nothing is sent on, and the next tunnel is fine', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('ok');
  for (const request of [
    // A length and chunks at once (CL.TE / TE.CL smuggling).
    `POST / HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: 6\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\nX`,
    // Two lengths.
    `POST / HTTP/1.1\r\nhost: ${rig.host}\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab`,
    // A header folded onto the next line (obs-fold).
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: Bearer\r\n ${rig.placeholder}\r\n\r\n`,
    // A control byte in a header value, and a bare LF ending a line.
    `GET / HTTP/1.1\r\nhost: ${rig.host}\r\nx-bad: a\x01b\r\n\r\n`,
    `GET / HTTP/1.1\nhost: ${rig.host}\r\n\r\n`,
    // Chunked that is not the last coding.
    `POST / HTTP/1.1\r\nhost: ${rig.host}\r\ntransfer-encoding: chunked, gzip\r\n\r\n0\r\n\r\n`,
  ]) {
    const socket = await rig.tunnel();
    expect(await untilClosed(socket, request)).toBe('');
  }
  expect(rig.connections).toEqual([]);
  const socket = await rig.tunnel();
  expect(bodyOf(await exchange(socket, `GET / HTTP/1.1\r\nhost: ${rig.host}\r\n\r\n`))).toBe(
    '2\r\nok\r\n0\r\n\r\n',
  );
  socket.destroy();
});

it('answers a client that closes (HTTP/1.0) to the close, with the value swapped back', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok(`echo ${VALUE}`);
  const socket = await rig.tunnel();
  const answer = await untilClosed(
    socket,
    `GET /old HTTP/1.0\r\nhost: ${rig.host}\r\nauthorization: ${rig.placeholder}\r\n\r\n`,
  );
  expect(answer).toBe(`HTTP/1.1 200 OK\r\nconnection: close\r\n\r\necho ${rig.placeholder}`);
  expect(rig.connections[0]?.received).toBe(
    `GET /old HTTP/1.1\r\nhost: ${rig.host}\r\nauthorization: ${VALUE}\r\naccept-encoding: identity\r\n\r\n`,
  );
});

it('refuses a protocol upgrade (501) and closes: nothing reaches the server', async () => {
  const rig = rigOf();
  const socket = await rig.tunnel();
  const answer = await untilClosed(
    socket,
    `GET /ws HTTP/1.1\r\nhost: ${rig.host}\r\nconnection: upgrade\r\nupgrade: websocket\r\nauthorization: ${rig.placeholder}\r\n\r\nframes`,
  );
  expect(answer.startsWith('HTTP/1.1 501 Not Implemented\r\n')).toBe(true);
  expect(answer).toContain('does not relay a protocol upgrade');
  expect(rig.connections).toEqual([]);
});

it('sends 100 Continue to a request that expects it, then the answer', async () => {
  const rig = rigOf();
  rig.answerWith = () => ok('done');
  const socket = await rig.tunnel();
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.endsWith('\r\n0\r\n\r\n')) resolve(text);
    });
    socket.write(`PUT /p HTTP/1.1\r\nhost: ${rig.host}\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\n`);
    socket.once('data', () => socket.write('hi'));
  });
  expect(answer.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n')).toBe(true);
  expect(bodyOf(answer.slice('HTTP/1.1 100 Continue\r\n\r\n'.length))).toBe('4\r\ndone\r\n0\r\n\r\n');
  expect(rig.connections[0]?.received.endsWith('\r\n\r\nhi')).toBe(true);
  socket.destroy();
});
