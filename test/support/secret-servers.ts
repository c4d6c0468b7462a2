/**
 * The servers a secrets test reaches, on 127.0.0.1: one HTTPS server with a certificate from a CA of
 * the test's own (made with openssl; for `api.secret.test` and `other.test`), and one plain HTTP
 * server. Both record every request as it arrived (the Host, the URL, the headers, the body) and
 * answer `/echo` with that record as JSON: an API that echoes what it was sent, secrets included.
 * The HTTPS server counts the TLS connections it accepted (kept-alive requests share one).
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

/** The PATH when this file was imported: a test may empty it to hide bubblewrap, not openssl. */
const PATH_AT_IMPORT = process.env['PATH'] ?? '';

export interface ReceivedRequest {
  server: 'https' | 'http';
  host: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The header lines as sent (Node's `headers` keeps only the first of two Host lines). */
  rawHeaders: string[];
  body: string;
}

export interface SecretServers {
  readonly received: ReceivedRequest[];
  readonly ports: { https: number; http: number };
  /** TLS connections the HTTPS server accepted. */
  readonly tlsConnections: number;
  /** The test CA's certificate (PEM): what the proxy checks the real server against. */
  readonly authority: string;
}

export function useSecretServers(): SecretServers {
  const received: ReceivedRequest[] = [];
  const ports = { https: 0, http: 0 };
  const state = { authority: '', tlsConnections: 0 };
  const servers: Server[] = [];
  const answer = (server: 'https' | 'http') => (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.once('end', () => {
      const record = {
        server,
        host: request.headers.host ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body,
      };
      received.push(record);
      const echo = (request.url ?? '').startsWith('/echo');
      response.writeHead(200, {
        'content-type': 'application/json',
        // An API that sets the token it was sent in a header of its answer too.
        ...(echo ? { 'x-echo-authorization': String(request.headers.authorization ?? '') } : {}),
      });
      response.end(echo ? JSON.stringify(record) : 'ok');
    });
  };
  beforeAll(async () => {
    const folder = await mkdtemp(join(tmpdir(), 'toolhost-secret-ca-'));
    try {
      const file = (name: string) => join(folder, name);
      const openssl = (args: string[]) =>
        execFileSync('openssl', args, { stdio: 'ignore', env: { ...process.env, PATH: PATH_AT_IMPORT } });
      openssl([
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=secrets test CA',
        '-keyout',
        file('ca.key'),
        '-out',
        file('ca.pem'),
      ]);
      openssl([
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/CN=api.secret.test',
        '-keyout',
        file('leaf.key'),
        '-out',
        file('leaf.csr'),
      ]);
      await writeFile(file('ext.cnf'), 'subjectAltName=DNS:api.secret.test,DNS:other.test\n');
      openssl([
        'x509',
        '-req',
        '-in',
        file('leaf.csr'),
        '-CA',
        file('ca.pem'),
        '-CAkey',
        file('ca.key'),
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        file('ext.cnf'),
        '-out',
        file('leaf.pem'),
      ]);
      state.authority = await readFile(file('ca.pem'), 'utf8');
      const https = createHttpsServer(
        { key: await readFile(file('leaf.key'), 'utf8'), cert: await readFile(file('leaf.pem'), 'utf8') },
        answer('https'),
      );
      https.on('secureConnection', () => {
        state.tlsConnections += 1;
      });
      const http = createHttpServer(answer('http'));
      // A WebSocket endpoint: records the upgrade request, switches, and closes.
      for (const [server, name] of [
        [https, 'https'],
        [http, 'http'],
      ] as const) {
        server.on('upgrade', (request: IncomingMessage, socket: Socket) => {
          received.push({
            server: name,
            host: request.headers.host ?? '',
            url: request.url ?? '',
            headers: request.headers,
            rawHeaders: request.rawHeaders,
            body: '',
          });
          socket.end('HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: websocket\r\n\r\n');
        });
      }
      servers.push(https, http);
      const listen = (server: Server) =>
        new Promise<number>((resolve) =>
          server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
        );
      [ports.https, ports.http] = await Promise.all([listen(https), listen(http)]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
  afterAll(async () => {
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
  return {
    received,
    ports,
    get tlsConnections() {
      return state.tlsConnections;
    },
    get authority() {
      return state.authority;
    },
  };
}

const SECRET_TOOLS = fileURLToPath(new URL('../../fixtures/secrets/tools', import.meta.url));
const UNDICI = dirname(fileURLToPath(import.meta.resolve('undici')));

/**
 * A package binding API_TOKEN to the API (and over plain HTTP to plain.secret.test), OTHER_TOKEN to
 * other.test; `more.apiHosts` are bound to API_TOKEN too, and asked for, as are `more.net`.
 */
export async function writeSecretTools(
  folder: string,
  ports: { https: number; http: number },
  more: { apiHosts?: readonly string[]; net?: readonly string[] } = {},
): Promise<string> {
  await cp(SECRET_TOOLS, join(folder, 'tools'), { recursive: true });
  await cp(UNDICI, join(folder, 'node_modules', 'undici'), { recursive: true });
  const manifest = {
    name: 'secret-tools',
    type: 'module',
    dependencies: { undici: '*' },
    toolhost: {
      tools: ['./tools/request.js', './tools/leak.js', './tools/raw-tls.js', './tools/upgrade.js'],
      permissions: {
        net: [
          `api.secret.test:${ports.https}`,
          `api.secret.test:${ports.http}`,
          `other.test:${ports.https}`,
          `other.test:${ports.http}`,
          `plain.secret.test:${ports.http}`,
          `127.0.0.1:${ports.https}`,
          `127.0.0.1:${ports.http}`,
          ...(more.apiHosts ?? []),
          ...(more.net ?? []),
        ],
        secrets: {
          API_TOKEN: [
            `api.secret.test:${ports.https}`,
            // Bound over TLS only: plain HTTP to it is refused.
            `api.secret.test:${ports.http}`,
            `http://plain.secret.test:${ports.http}`,
            ...(more.apiHosts ?? []),
          ],
          OTHER_TOKEN: [`other.test:${ports.https}`],
        },
      },
    },
  };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return folder;
}
