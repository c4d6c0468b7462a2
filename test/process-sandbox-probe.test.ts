/**
 * How the process tier decides whether it has a sandbox: it tries one, once per process. Here the
 * `bwrap` on the host's PATH is a stand-in that refuses `--disable-userns` (bubblewrap before 0.8),
 * and otherwise runs the real one: the tier keeps the sandbox without that flag. A bwrap that
 * refuses to run at all (user namespaces off) is process-sandbox-refused.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { outcomeText } from '../dist/src/index.js';
import { sandboxSupport } from '../dist/src/process/sandbox/sandbox.js';
import { useHosts } from './support/host-harness.js';

const HOSTILE = fileURLToPath(new URL('../fixtures/process/hostile', import.meta.url));
const realBwrap = (() => {
  try {
    return execFileSync('/bin/sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
const standIn = join(mkdtempSync(join(tmpdir(), 'toolhost-old-bwrap-')), 'bwrap');
writeFileSync(
  standIn,
  `#!/bin/sh
for arg in "$@"; do
  if [ "$arg" = --disable-userns ]; then echo "bwrap: Unknown option --disable-userns" >&2; exit 1; fi
done
exec ${JSON.stringify(realBwrap)} "$@"
`,
);
chmodSync(standIn, 0o755);
// Before the tier first looks (once per process): the stand-in comes first on PATH.
process.env['PATH'] = `${join(standIn, '..')}:${process.env['PATH'] ?? ''}`;

const makeHost = useHosts();
afterAll(() => rmSync(join(standIn, '..'), { recursive: true, force: true }));

describe('a bubblewrap without --disable-userns', () => {
  it.skipIf(realBwrap === '')('still sandboxes the process, without that one flag', async () => {
    expect(await sandboxSupport()).toEqual({ available: true, bwrap: standIn, disableUserns: false });
    const { host, logger } = await makeHost({ isolation: 'process' });
    await host.load(HOSTILE);
    expect(outcomeText(await host.call('proc_read_own_file', {}))).toBe('process-hostile');
    const seen = JSON.parse(outcomeText(await host.call('proc_whoami', {})));
    // Its own pid namespace: the sandbox is there.
    expect(seen.pid).toBeLessThan(10);
    expect(logger.matching('warn', 'OS sandbox')).toEqual([]);
  });
});
