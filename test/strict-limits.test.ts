/**
 * What neither tier contains, run to show it (docs/isolation.md's table of what each tier contains is built from
 * these): the network (strict denies it only on Node 25 and later) and memory outside the JS heap
 * (resourceLimits bound the heap, not ArrayBuffers). If one of these starts failing, Node contains
 * more than it did: update docs/isolation.md.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost } from '../dist/src/index.js';
import { recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/strict/hostile', import.meta.url));

let root: string;
let host: ToolHost;
let server: Server | undefined;

beforeEach(async () => {
  root = await tempDir('toolhost-strict-limits-');
});

afterEach(async () => {
  await host?.close();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
  await removeDir(root);
});

for (const isolation of ['worker', 'strict'] as const) {
  describe(`not contained by isolation: '${isolation}'`, () => {
    beforeEach(async () => {
      host = new ToolHost({
        dataDir: join(root, 'data'),
        isolation,
        callHeapMb: 32,
        logger: recordingLogger(),
      });
      const report = await host.load(HOSTILE);
      expect(report.modules.every((module) => module.state === 'offered')).toBe(true);
    });

    // Node 25 added network to the permission model (`--allow-net`): strict refuses this there
    // (strict-network.test.ts).
    it('a tool can make network requests', async ({ skip }) => {
      skip(
        isolation === 'strict' && process.allowedNodeEnvironmentFlags.has('--allow-net'),
        `strict on Node ${process.version} denies the network (strict-network.test.ts)`,
      );
      const requests: string[] = [];
      server = createServer((request, response) => {
        requests.push(request.url ?? '');
        response.end('reached a local server');
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const outcome = await host.call('strict_fetch', { url: `http://127.0.0.1:${port}/exfiltrate` });
      expect(outcomeText(outcome)).toBe('reached a local server');
      expect(requests).toEqual(['/exfiltrate']);
    });

    it('a tool can hold far more memory than its heap limit, in ArrayBuffers', async () => {
      const outcome = await host.call('strict_external_memory', { megabytes: 512 });
      expect(outcome.isError).toBe(false);
      expect(JSON.parse(outcomeText(outcome))).toEqual({ heldMegabytes: 512 });
    });
  });
}
