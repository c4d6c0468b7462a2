/**
 * A `bwrap` that is installed but refuses to start a sandbox (user namespaces turned off, a security
 * module in the way; here a stand-in on the host's PATH that fails as bubblewrap then does): the
 * process tier runs without a sandbox and says why, once, in bubblewrap's own words.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { outcomeText } from '../dist/src/index.js';
import { sandboxSupport } from '../dist/src/process/sandbox/sandbox.js';
import { useHosts } from './support/host-harness.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const REFUSAL =
  'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.';
const standIn = join(mkdtempSync(join(tmpdir(), 'toolhost-refusing-bwrap-')), 'bwrap');
writeFileSync(standIn, `#!/bin/sh\necho ${JSON.stringify(REFUSAL)} >&2\nexit 1\n`);
chmodSync(standIn, 0o755);
// Before the tier first looks (once per process): the stand-in comes first on PATH.
process.env['PATH'] = `${join(standIn, '..')}:${process.env['PATH'] ?? ''}`;

const makeHost = useHosts();
afterAll(() => rmSync(join(standIn, '..'), { recursive: true, force: true }));

describe('a bubblewrap that refuses to start a sandbox', () => {
  it.skipIf(process.platform !== 'linux')(
    'leaves the process tier without one: calls still run in a process of their own, and the host says why once',
    async () => {
      expect(await sandboxSupport()).toEqual({
        available: false,
        reason: `bwrap refused to start a sandbox here: ${REFUSAL}`,
      });
      const { host, logger } = await makeHost({ isolation: 'process' });
      await host.load(HOSTILE);
      const seen = JSON.parse(outcomeText(await host.call('proc_whoami', { idsOnly: true })));
      expect(seen.ppid).toBe(process.pid);
      expect(logger.matching('warn', 'process isolation here runs without')).toEqual([
        expect.stringContaining(`an OS sandbox (bwrap refused to start a sandbox here: ${REFUSAL})`),
      ]);
    },
  );
});
