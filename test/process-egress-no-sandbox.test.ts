/**
 * A package held to a list of hosts in the process tier where there is no OS sandbox (bubblewrap
 * hidden from the host's PATH, as in process-no-sandbox.test.ts): no proxy can hold it to them, and
 * the host says so once per package, however many processes and calls it has. Whether its tools
 * reach the network then is the tier's without a sandbox (docs/isolation.md), not asserted here.
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ToolHost } from '../dist/src/index.js';
import { processEnvironment } from '../dist/src/process/sandbox/process-tier.js';
import { type RecordingLogger, recordingLogger } from './support/host-harness.js';
import { removeDir, tempDir } from './support/tool-packages.js';

process.env['PATH'] = '';
const FETCH_TOOL = fileURLToPath(new URL('../fixtures/network/egress/tools/fetch.js', import.meta.url));
const environment = await processEnvironment();

let root: string;
let host: ToolHost | undefined;
let logger: RecordingLogger;

beforeEach(async () => {
  root = await tempDir('toolhost-egress-no-sandbox-');
  logger = recordingLogger();
});

afterEach(async () => {
  await host?.close();
  host = undefined;
  await removeDir(root);
});

it('a package held to hosts without a sandbox is said once not to be held to them, and its calls still answer', async () => {
  expect(environment.sandbox.available).toBe(false);
  const folder = join(root, 'weather-tools');
  await cp(FETCH_TOOL, join(folder, 'tools', 'fetch.js'));
  const manifest = {
    name: 'weather-tools',
    type: 'module',
    toolhost: { tools: ['./tools/fetch.js'], permissions: { net: ['api.weather.gov'] } },
  };
  await writeFile(join(folder, 'package.json'), JSON.stringify(manifest));
  host = new ToolHost({ dataDir: join(root, 'data'), isolation: 'process', logger, allowNetwork: true });
  const report = await host.load(folder);
  expect(report.modules.map((module) => module.state)).toEqual(['offered']);
  // A name that does not resolve: the call answers with an error, whatever the network is here.
  for (let index = 0; index < 2; index += 1) {
    const outcome = await host.call('egress_fetch', { url: 'http://unresolvable.invalid/' });
    expect(outcome.isError).toBe(true);
  }
  expect(logger.matching('warn', 'weather-tools is granted')).toEqual([
    'weather-tools is granted network access to api.weather.gov only, which the process tier enforces only inside bubblewrap: here its tools are not held to those hosts; see the table of what each tier contains in docs/isolation.md',
  ]);
});
