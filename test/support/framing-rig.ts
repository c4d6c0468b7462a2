/**
 * A secrets proxy in front of a raw TLS server that records every byte it gets and answers what a
 * test scripts, for the tests that pin the proxy's framing byte for byte: the bound host's bytes
 * both ways, with nothing of Node's HTTP between the test and the wire.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { NetworkNote } from '../../dist/src/process/network/proxy-options.js';
import { certificatesFor } from '../../dist/src/process/network/secrets/certificate-authority.js';
import { makePlaceholder } from '../../dist/src/process/network/secrets/replace.js';
import { tunnelsOf } from '../../dist/src/process/network/tunnel-agents.js';
import { startSecretsProxy, stopSecretsProxy } from './secrets-proxy.js';
import { removeDir, tempDir } from './tool-packages.js';

export interface FramingRig {
  value: string;
  placeholder: string;
  notes: NetworkNote[];
  /** Every connection the real server took: the bytes it received, in order. */
  connections: Array<{ received: string; socket: TLSSocket }>;
  /** What the real server answers a whole request with (given it, and its connection's number). */
  answerWith: (request: string, connection: number) => string | undefined;
  /** The bound host's `host:port`. */
  host: string;
  /** Called when the call's budget (1 MiB) runs out: the proxy's open exchanges are held. */
  onBudgetOver: () => void;
  /** The real server (for a test that answers by hand). */
  upstream: TlsServer;
  /** A tunnel as toolhost's agents open one to the bound host: plain HTTP to the proxy. */
  tunnel(): Promise<Socket>;
  stop(): Promise<void>;
}

/** Starts the real server and the proxy (secret `FRAMING_TOKEN` bound to `bound.test`). */
export async function startFramingRig(value: string): Promise<FramingRig> {
  const root = await tempDir('toolhost-secrets-framing-');
  const made = await certificatesFor(['bound.test']);
  const leaf = made.leaves['bound.test'];
  if (leaf === undefined) throw new Error('no certificate');
  const rig = {
    value,
    placeholder: makePlaceholder(),
    notes: [] as NetworkNote[],
    connections: [] as Array<{ received: string; socket: TLSSocket }>,
    answerWith: (() => undefined) as FramingRig['answerWith'],
    onBudgetOver: () => {},
  };
  const upstream = createTlsServer({ key: leaf.key, cert: leaf.certificate }, (socket) => {
    const connection = { received: '', socket };
    const number = rig.connections.push(connection) - 1;
    let from = 0;
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      connection.received += chunk.toString('latin1');
      // One answer per whole request the connection holds past the last answered one.
      for (;;) {
        const end = wholeRequestEnd(connection.received, from);
        if (end === undefined) return;
        const answer = rig.answerWith(connection.received.slice(from, end), number);
        from = end;
        if (answer !== undefined) socket.write(answer, 'latin1');
      }
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as AddressInfo).port;
  const proxy: Server = await startSecretsProxy({
    folder: root,
    packageName: 'framing-tools',
    net: [`bound.test:${port}`, `127.0.0.1:${port}`],
    testHosts: { 'bound.test': ['127.0.0.1'] },
    secret: { name: 'FRAMING_TOKEN', value, placeholder: rig.placeholder, boundTo: `bound.test:${port}` },
    made,
    notes: rig.notes,
    onBudgetOver: () => rig.onBudgetOver(),
  });
  return Object.assign(rig, {
    host: `bound.test:${port}`,
    upstream,
    tunnel: async () => {
      const { socket, tlsAtProxy } = await tunnelsOf({
        socketPath: join(root, 'proxy.sock'),
        trustCertificates: made.authority,
      }).open('bound.test', port, true);
      expect(tlsAtProxy).toBe(true);
      return socket;
    },
    stop: () =>
      stopSecretsProxy([proxy], async () => {
        for (const { socket } of rig.connections) socket.destroy();
        await new Promise((resolve) => upstream.close(resolve));
        await removeDir(root);
      }),
  });
}

/**
 * One rig for a test file: started before its tests, stopped after them, its notes and the server's
 * connections cleared before each. The rig is read through the returned function.
 */
export function useFramingRig(value: string): () => FramingRig {
  let rig: FramingRig | undefined;
  beforeAll(async () => {
    rig = await startFramingRig(value);
  });
  afterAll(() => rig?.stop());
  beforeEach(() => {
    if (rig === undefined) return;
    rig.notes.length = 0;
    rig.connections.length = 0;
  });
  return () => {
    if (rig === undefined) throw new Error('the framing rig is not started');
    return rig;
  };
}

/**
 * A whole answer with `body`; `close` (the default) has the server end the connection after it, so
 * no test's kept-alive connection serves the next test.
 */
export const ok = (body: string, close = true) =>
  `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n${close ? 'connection: close\r\n' : ''}\r\n${body}`;

/** Where a whole request ends in `text` from `from` (its head, and its body by length or chunks). */
export function wholeRequestEnd(text: string, from: number): number | undefined {
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

/** Everything the proxy sends on `socket` after `text`, until it closes the connection. */
export function untilClosed(socket: Socket, text: string): Promise<string> {
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
export function bodyOf(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}

/** The requests in what one connection received, each whole. */
export function splitRequests(text: string): string[] {
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
export function dechunk(text: string): string {
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
