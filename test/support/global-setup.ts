/**
 * One snapshot store per run of the suite, removed after: a test that reads a declaration reads it
 * afresh (the store keeps declarations across runs), and no run depends on what an earlier run, or
 * the machine's user, left in `~/.cache/toolhost`. The hosts of the test files and the commands
 * they start (cli-run.ts passes it on) all use it, unless a test names a store of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'toolhost-suite-store-'));
  process.env['TOOLHOST_CACHE_DIR'] = folder;
  return () => rmSync(folder, { recursive: true, force: true });
}
