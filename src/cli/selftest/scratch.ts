/**
 * The throwaway folder a selftest run lives in, removed when the run ends:
 *
 *   toolhost-selftest-XXXXXX/
 *     cwd/    the working directory while declarations are read and selftests run, so a relative
 *             write lands here (and is reported) instead of in the user's folder
 *     data/   the host's dataDir for the run: selftests never see the user's real data
 *     tmp/    where the host makes every selftest's tmpDir; it must be empty once the host closes
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolHostOptions } from '../../host/options.js';
import { ToolHost } from '../../host/tool-host.js';

export interface SelftestScratch {
  root: string;
  workingDirectory: string;
  dataDir: string;
  tmpRoot: string;
}

export async function makeScratch(): Promise<SelftestScratch> {
  const root = await mkdtemp(join(tmpdir(), 'toolhost-selftest-'));
  const scratch = {
    root,
    workingDirectory: join(root, 'cwd'),
    dataDir: join(root, 'data'),
    tmpRoot: join(root, 'tmp'),
  };
  await Promise.all([mkdir(scratch.workingDirectory), mkdir(scratch.dataDir), mkdir(scratch.tmpRoot)]);
  return scratch;
}

/** A host whose calls' tmpDirs are made under `tmpRoot`, so a run can check none is left. */
export function hostWithTmpRoot(options: ToolHostOptions, tmpRoot: string): ToolHost {
  return new ToolHost({ ...options, tempRoot: tmpRoot });
}

/**
 * What is left under the tmp root once the host closed: each call's tmpDir (`call-N`) and any
 * other file, or else the host's own folders if those are what remain.
 */
export async function leftoverTmpDirs(scratch: SelftestScratch): Promise<string[]> {
  const left: string[] = [];
  const walk = async (folder: string) => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory() && !entry.name.startsWith('call-')) await walk(path);
      else left.push(path);
    }
  };
  await walk(scratch.tmpRoot);
  if (left.length > 0) return left;
  const top = await readdir(scratch.tmpRoot).catch(() => []);
  return top.map((name) => join(scratch.tmpRoot, name));
}

export async function removeScratch(scratch: SelftestScratch): Promise<void> {
  await rm(scratch.root, { recursive: true, force: true, maxRetries: 3 });
}
