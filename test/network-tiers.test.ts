/**
 * A package held to a list of hosts, in the tiers that can't hold it to one: the host says so once
 * per package, and what the tool reaches is what docs/isolation.md's table says (strict on Node 25 and
 * later: nothing; strict before it and the worker tier: the whole network). Every attempt goes to a
 * server of this test on 127.0.0.1, which counts what reaches it.
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomeText, ToolHost, type ToolOutcome } from '../dist/src/index.js';
import { type RecordingLogger, recordingLogger } from './support/host-harness.js';
import { useLocalServers } from './support/local-servers.js';
import { removeDir, tempDir } from './support/tool-packages.js';

const FETCH_TOOL = fileURLToPath(new URL('../fixtures/network/egress/tools/fetch.js', import.meta.url));
const STRICT_DENIES_NETWORK = process.allowedNodeEnvironmentFlags.has('--allow-net');
const servers = useLocalServers();
const { reached } = servers;

let root: string;
let host: ToolHost | undefined;
let logger: RecordingLogger;

beforeEach(async () => {
  root = await tempDir('toolhost-network-tiers-');
  reached.requests.length = 0;
  logger = recordingLogger();
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  await removeDir(root);
});

async function weatherTools(): Promise<string> {
  const folder = join(root, 'weather-tools');
  await cp(FETCH_TOOL, join(folder, 'tools', 'fetch.js'));
  const manifest = {
    name: 'weather-tools',
    type: 'module',
    toolhost: { tools: ['./tools/fetch.js'], permissions: { net: ['api.weather.gov'] } },
  };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  return folder;
}

describe.each(['worker', 'strict'] as const)('a package held to hosts in the %s tier', (tier) => {
  const denies = tier === 'strict' && STRICT_DENIES_NETWORK;

  it(
    denies
      ? 'gets no network at all, and the host says why once'
      : 'is not held to them, and the host says so once',
    async () => {
      host = new ToolHost({ dataDir: join(root, 'data'), isolation: tier, logger, allowNetwork: true });
      const report = await host.load(await weatherTools());
      expect(report.modules.map((module) => module.state)).toEqual(['offered']);
      const first = (await host.call('egress_fetch', { url: servers.httpUrl })) as ToolOutcome;
      const second = (await host.call('egress_fetch', { url: servers.httpUrl })) as ToolOutcome;
      const { port } = new URL(servers.httpUrl);
      if (denies) {
        for (const outcome of [first, second]) {
          expect(outcome.error).toEqual({
            code: 'TOOL_ACCESS_DENIED',
            message: `the strict isolation tier refused Net (connect 127.0.0.1:${port})`,
          });
        }
        expect(reached.requests).toEqual([]);
      } else {
        expect(outcomeText(first)).toBe('200 reached the http server');
        expect(reached.requests).toEqual(['/exfiltrate', '/exfiltrate']);
      }
      expect(logger.matching('warn', 'weather-tools is granted')).toEqual([
        denies
          ? 'weather-tools is granted network access to api.weather.gov only, and strict isolation can only allow or deny the whole network: its strict workers have none (the process tier in bubblewrap holds a package to its hosts)'
          : `weather-tools is granted network access to api.weather.gov only, and ${tier} isolation on Node ${process.version} does not contain the network: its tools are not held to those hosts (the process tier in bubblewrap is)`,
      ]);
    },
  );
});
