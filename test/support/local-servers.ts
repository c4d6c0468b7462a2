/**
 * An HTTP and a TCP server on loopback that count what reaches them, started before a suite's tests
 * and closed after: where a tool that must not have the network tries to exfiltrate to.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

export interface LocalServers {
  /** What reached them: the HTTP requests' paths, and how many TCP connections. */
  readonly reached: { requests: string[]; connections: number };
  /** `http://127.0.0.1:<port>/exfiltrate` (set once the suite started). */
  readonly httpUrl: string;
  readonly tcpPort: number;
}

export function useLocalServers(): LocalServers {
  const reached = { requests: [] as string[], connections: 0 };
  let http: HttpServer | undefined;
  let tcp: TcpServer | undefined;
  let httpUrl = '';
  let tcpPort = 0;
  beforeAll(async () => {
    http = createHttpServer((request, response) => {
      reached.requests.push(request.url ?? '');
      response.end('reached the http server');
    });
    tcp = createTcpServer((socket) => {
      reached.connections += 1;
      socket.end('reached the tcp server');
    });
    await Promise.all([
      new Promise<void>((resolve) => http?.listen(0, '127.0.0.1', resolve)),
      new Promise<void>((resolve) => tcp?.listen(0, '127.0.0.1', resolve)),
    ]);
    httpUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/exfiltrate`;
    tcpPort = (tcp.address() as AddressInfo).port;
  });
  afterAll(async () => {
    http?.closeAllConnections();
    await Promise.all([
      new Promise((resolve) => http?.close(resolve)),
      new Promise((resolve) => tcp?.close(resolve)),
    ]);
  });
  return {
    reached,
    get httpUrl() {
      return httpUrl;
    },
    get tcpPort() {
      return tcpPort;
    },
  };
}
