/**
 * A worker between calls: work a call leaves under way (a keep-alive connection going back to its
 * pool, say) moves on before the worker waits for its next task, as it would in a Node process of
 * the tool's own.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { answered, fixtureModule, useHosts } from './support/host-harness.js';

const makeHost = useHosts();
let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

describe('a tool that fetches with keep-alive, call after call on one worker', () => {
  it("reuses its one connection: each call's connection went back to the pool after the call", async () => {
    const connections: unknown[] = [];
    server = createServer((_request, response) => response.end('fetched'));
    server.on('connection', (socket) => connections.push(socket));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const { host } = await makeHost({ maxThreadsPerPool: 1 });
    await host.load(fixtureModule('call-fetch.js'));

    for (let call = 0; call < 8; call += 1) {
      expect(await host.call('call_fetch', { url: `http://127.0.0.1:${port}/` })).toStrictEqual(
        answered('fetched'),
      );
    }
    expect(connections).toHaveLength(1);
  });
});
