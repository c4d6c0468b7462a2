/**
 * The servers an egress test reaches, all on 127.0.0.1: "the granted API" over HTTP and over HTTPS
 * (a self-signed certificate made for the suite with openssl, for `api.weather.test`), "another
 * host" over HTTP, and a raw TCP service standing for the host's own loopback services. Each counts
 * what reaches it. The API answers `/redirect?to=<url>` with a 302 to that URL, `/bytes?n=<count>`
 * with that many bytes, and `/upload` with how many bytes of the request's body it read.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

export interface EgressServers {
  /** Paths of the requests that reached each server, and the raw connections of the TCP one. */
  readonly reached: { api: string[]; other: string[]; loopback: number };
  readonly ports: { http: number; https: number; other: number; tcp: number };
  /** The certificate the HTTPS server presents (PEM), for the agents to trust. */
  readonly certificate: string;
}

export function useEgressServers(): EgressServers {
  const reached = { api: [] as string[], other: [] as string[], loopback: 0 };
  const ports = { http: 0, https: 0, other: 0, tcp: 0 };
  let certificate = '';
  const servers: Array<Server | TcpServer> = [];
  const api = (request: IncomingMessage, response: ServerResponse) => {
    reached.api.push(request.url ?? '');
    const url = new URL(request.url ?? '/', 'http://api.weather.test');
    const to = url.searchParams.get('to');
    if (url.pathname === '/redirect' && to !== null) {
      response.writeHead(302, { location: to });
      response.end();
      return;
    }
    if (url.pathname === '/bytes') {
      sendBytes(response, Number(url.searchParams.get('n')));
      return;
    }
    if (url.pathname === '/upload') {
      let received = 0;
      request.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      request.once('end', () => response.end(`received ${received}`));
      request.once('error', () => response.destroy());
      return;
    }
    response.end(`api says ${url.pathname}`);
  };
  beforeAll(async () => {
    const folder = await mkdtemp(join(tmpdir(), 'toolhost-egress-cert-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=api.weather.test',
          '-addext',
          'subjectAltName=DNS:api.weather.test',
          '-keyout',
          join(folder, 'key.pem'),
          '-out',
          join(folder, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      certificate = await readFile(join(folder, 'cert.pem'), 'utf8');
      const key = await readFile(join(folder, 'key.pem'), 'utf8');
      const http = createHttpServer(api);
      const https = createHttpsServer({ key, cert: certificate }, api);
      const other = createHttpServer((request, response) => {
        reached.other.push(request.url ?? '');
        response.end('another host answered');
      });
      const tcp = createTcpServer((socket) => {
        reached.loopback += 1;
        socket.end('a loopback service answered');
      });
      servers.push(http, https, other, tcp);
      const listen = (server: Server | TcpServer) =>
        new Promise<number>((resolve) =>
          server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
        );
      [ports.http, ports.https, ports.other, ports.tcp] = await Promise.all([
        listen(http),
        listen(https),
        listen(other),
        listen(tcp),
      ]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
  afterAll(async () => {
    for (const server of servers) if ('closeAllConnections' in server) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
  return {
    reached,
    ports,
    get certificate() {
      return certificate;
    },
  };
}

/** `count` bytes, written as the client takes them (a download as big as a test wants). */
function sendBytes(response: ServerResponse, count: number): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let left = Number.isSafeInteger(count) && count > 0 ? count : 0;
  response.writeHead(200, { 'content-length': String(left) });
  const more = () => {
    while (left > 0) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= part.length;
      if (!response.write(part)) {
        response.once('drain', more);
        return;
      }
    }
    response.end();
  };
  response.once('close', () => {
    left = 0;
  });
  more();
}
